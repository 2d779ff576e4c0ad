"""The ``radius`` of a radius search: one for every query, or one per query (an array), as
scikit-learn's trees take it.

A per-query search runs once with the largest radius, then each row keeps the entries within
its own radius. The bound of each row is computed by the same scalar arithmetic the
one-radius search applies (:func:`row_bounds`), so a row answers exactly what a search with
its radius alone answers, points on the sphere included.
"""

import numpy as np

from .._validation.params import check_scalar


def check_radius(radius, n_queries):
    """A scalar radius (a float) or one radius per query (a float64 array).

    Parameters
    ----------
    radius : float or array-like of shape (n_queries,)
        Distances >= 0 (inf allowed).
    n_queries : int

    Returns
    -------
    float or ndarray of shape (n_queries,)
    """
    if np.ndim(radius) == 0:
        if isinstance(radius, np.ndarray):  # a 0-d array: its number
            radius = radius.item()
        check_scalar(radius, "radius", "real", min_value=0, allow_inf=True)
        return radius
    arr = np.asarray(radius)
    if arr.dtype.kind not in "fiu" or arr.dtype.kind == "b":
        raise TypeError(f"radius must be a number or an array of numbers (one per query); "
                        f"got an array of dtype {arr.dtype}.")
    if arr.ndim != 1 or arr.shape[0] != n_queries:
        raise ValueError(
            f"radius has shape {arr.shape}, but there are {n_queries} queries: pass one "
            f"radius for all of them, or an array of shape ({n_queries},) with one per query."
        )
    arr = arr.astype(np.float64)
    if np.isnan(arr).any() or (arr < 0).any():
        bad = int(np.flatnonzero(np.isnan(arr) | (arr < 0))[0])
        raise ValueError(f"radius must be >= 0 for every query; radius[{bad}] is "
                         f"{float(arr[bad])!r}. Pass distances >= 0 (np.inf for no limit).")
    return arr


def largest(radius):
    """The radius the shared search runs with: the largest one (0 when there are no
    queries)."""
    if np.ndim(radius) == 0:
        return radius
    return float(radius.max()) if radius.size else 0.0


def row_bounds(radius, to_bound):
    """Each query's bound in the units of the search's values: ``to_bound(r)`` applied to
    every radius, as the one-radius search applies it to its radius."""
    return np.array([to_bound(float(r)) for r in radius], dtype=np.float64)


def keep_within(indptr, indices, values, keys, bounds):
    """CSR arrays ``(indptr, indices, values)`` of a radius search with row i cut to the
    entries whose key (the value the search tested) is <= ``bounds[i]``, the order within
    rows kept."""
    m = indptr.shape[0] - 1
    rows = np.repeat(np.arange(m), np.diff(indptr))
    keep = keys <= bounds[rows]
    if keep.all():
        return indptr, indices, values
    out_ptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=m), out=out_ptr[1:])
    return out_ptr, indices[keep], values[keep]
