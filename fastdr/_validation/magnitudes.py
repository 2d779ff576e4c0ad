"""Checks that keep distance kernels safe: magnitudes that would overflow or underflow
squared distances, "no neighbour" markers from trees and heaps, and user-supplied graphs.

Every entry that computes distances calls :func:`check_distance_magnitude` on its input;
every index that comes from a tree or a heap passes :func:`check_neighbor_indices` before
a kernel reads through it.
"""

import numpy as np

from .._config import MAGNITUDE_BLOCK_ROWS as _BLOCK_ROWS


def check_distance_magnitude(X, name="X", *, centre=None, dtype=None, sq_norms=None,
                             training=None):
    """Refuse values so large (or so small) that squared distances overflow (or underflow).

    Every distance kernel forms squared distances (directly, or as ``|x - c|^2 + |y - c|^2
    - 2 (x - c).(y - c)`` around a centre c). With rows further than about 1e154 from the
    centre (about 1.8e19 in float32) those overflow to inf, and neighbour searches then meet
    "no neighbour" markers instead of indices. This check bounds them at the boundary:
    ``16 max_i |x_i - c|^2`` must be finite in float64 and in ``dtype``, which covers the
    squared distance between any two rows (at most ``4 max |x - c|^2``) with room to spare.
    At the other end, ``max_i |x_i - c|^2`` must not underflow ``dtype`` (about 1e-308 in
    float64, 1e-38 in float32; exactly 0, identical rows, is fine), or all distances are 0
    (checked for the training rows only: a query may lie as close to the centre as it likes).

    Parameters
    ----------
    X : ndarray of shape (m, d)
        Finite (already validated by :func:`check_array`).
    name : str
        How X is called in the message.
    centre : ndarray of shape (d,) or None
        The centre of the training data, for queries measured against it; None means the
        mean of X.
    dtype : numpy dtype or None
        The dtype the distances are computed in; None means X's dtype.
    sq_norms : ndarray of shape (m,) or None
        ``|x_i - centre|^2`` already computed (the norm trick's norms, with ``centre``
        given): their maximum replaces the pass over X, unless it is not finite or small
        enough that squares may have underflowed (then X is scanned as without them).
    training : bool or None
        Whether X holds training rows (checked for underflow too); None means ``centre is
        None``.

    Returns
    -------
    ndarray of shape (d,), float64
        The centre used (the mean of X when ``centre`` is None), to check later queries.

    Raises
    ------
    ValueError
        When the squared distances would overflow.
    """
    X = np.asarray(X)
    # queries are measured against the training rows, whose own spread was checked at fit
    check_small = centre is None if training is None else training
    work = np.dtype(X.dtype if dtype is None else dtype)
    limit = float(np.finfo(work if work.kind == "f" else np.float64).max) / 16
    with np.errstate(over="ignore", invalid="ignore"):
        if centre is None:
            centre = (X.mean(axis=0, dtype=np.float64) if X.shape[0]
                      else np.zeros(X.shape[1]))
        sq_norm = (float(np.max(sq_norms)) if sq_norms is not None and len(sq_norms)
                   else None)
        if sq_norm is None or not _UNDERFLOW_SAFE <= sq_norm < np.inf:
            sq_norm = _max_centred_sq_norm(X, centre)
    if not np.isfinite(centre).all() or not sq_norm <= limit:
        largest = float(np.abs(X).max()) if X.size else 0.0
        raise ValueError(
            f"{name} holds values too large to compute distances: the largest absolute value "
            f"is {largest:.3g}, so squared distances between rows overflow {work.name} (rows "
            f"must lie within about {np.sqrt(limit):.1g} of the data's centre). Scale the "
            "data first, for example with sklearn.preprocessing.StandardScaler."
        )
    tiny = float(np.finfo(work if work.kind == "f" else np.float64).tiny)
    if check_small and 0 < sq_norm < tiny:
        raise ValueError(
            f"{name} holds values too small to compute distances: the rows spread over only "
            f"{np.sqrt(sq_norm):.3g} around their centre, so squared distances underflow "
            f"{work.name} (below {tiny:.3g}) and every neighbour would tie. Scale the data "
            "first, for example with sklearn.preprocessing.StandardScaler."
        )
    return centre



#: below this the compiled pass may have lost squares to underflow: the scaled pass decides
_UNDERFLOW_SAFE = 1e-250



def _max_centred_sq_norm(X, centre):
    """``max_i |x_i - centre|^2`` in float64 (inf when it overflows), O(block x d) memory.

    A serial compiled pass first (no temporaries, unlike numpy's); when its answer is tiny
    enough that squares may have underflowed, rows are
    scaled before squaring, block by block.
    """
    from .._kernels.distances.euclidean import max_centred_sqnorm  # numba: imported on first use

    if X.dtype in (np.float32, np.float64) and X.flags.c_contiguous:
        largest = max_centred_sqnorm(X, np.ascontiguousarray(centre, dtype=np.float64))
        if largest >= _UNDERFLOW_SAFE:
            return largest
    largest = 0.0
    for start in range(0, X.shape[0], _BLOCK_ROWS):
        shifted = np.asarray(X[start:start + _BLOCK_ROWS], dtype=np.float64) - centre
        scale = float(np.abs(shifted).max()) if shifted.size else 0.0
        if not np.isfinite(scale):
            return np.inf
        if scale > 0:
            # scaled before squaring, so that the norms themselves never overflow
            unit = shifted / scale
            largest = max(largest, float(np.einsum("ij,ij->i", unit, unit).max())
                          * scale * scale)
    return largest

