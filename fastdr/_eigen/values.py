"""What the eigen pipeline does with computed eigenvalues: clip, zero, count, invert.

Used by :func:`fastdr._eigen.spectral_pairs`; the estimators reach these rules through it.
"""

import warnings

import numpy as np

#: Round-off allowance of the cumulative-ratio rule of :func:`n_components_for_ratio`.
RATIO_ROUNDOFF = 1e-12
#: Eigenvalues below this fraction of the largest count as zero in ``n_components="nonzero"``.
ZERO_EIGENVALUE_RATIO = 1e-12


def clip_negative_eigenvalues(values, *, what, warn_ratio=None):
    """Clip negative eigenvalues to 0; warn, naming them, when any is not negligible.

    A negative eigenvalue is negligible (round-off) when its magnitude is at most
    ``warn_ratio`` times the largest eigenvalue magnitude. ``warn_ratio=None`` uses 1e-8 for
    float64 values and 1e-3 for float32 values (whose eigensolver round-off is larger).

    Parameters
    ----------
    values : array-like of shape (k,)
    what : str
        What the eigenvalues belong to, for the warning ("The double-centred kernel matrix").
    warn_ratio : float or None

    Returns
    -------
    ndarray of float64
        The clipped copy.
    """
    values = np.asarray(values)
    if warn_ratio is None:
        warn_ratio = 1e-3 if values.dtype == np.float32 else 1e-8
    values = np.array(values, dtype=np.float64)
    negative = values < 0
    if negative.any():
        scale = np.max(np.abs(values))
        significant = np.flatnonzero(negative & (np.abs(values) > warn_ratio * scale))
        if significant.size:
            shown = ", ".join(f"#{i} = {values[i]:.3g}" for i in significant[:5])
            more = f" and {significant.size - 5} more" if significant.size > 5 else ""
            warnings.warn(
                f"{what} has {significant.size} negative eigenvalue(s) that are not round-off "
                f"({shown}{more}; the largest eigenvalue magnitude is {scale:.3g}); they were "
                "set to 0. The input is not exactly Euclidean (or the kernel is not positive "
                "semidefinite).",
                RuntimeWarning,
                stacklevel=3,
            )
        values[negative] = 0.0
    return values


def zero_roundoff_eigenvalues(values, n, dtype):
    """Set eigenvalues that are zero to round-off to exactly 0 (a copy, float64).

    An eigenvalue of an n x n matrix of ``dtype`` is round-off when its magnitude is at most
    ``10 sqrt(n) eps`` times the largest magnitude: LAPACK and the iterative solvers return
    such values for the null space of a rank-deficient matrix. Zeroing them keeps
    ``Lambda^(-1/2)`` (new-point placement in MDS and kernel PCA) from amplifying noise: those
    components get coordinate 0.
    """
    values = np.array(values, dtype=np.float64)
    if values.size:
        limit = 10.0 * np.sqrt(n) * np.finfo(dtype).eps * np.abs(values).max()
        values[np.abs(values) <= limit] = 0.0
    return values


def n_components_for_ratio(values, threshold):
    """Smallest d' whose cumulative ratio of the positive ``values`` is >= ``threshold``.

    This is the textbook rule (scikit-learn's PCA uses a strict ``>``). The comparison allows
    ``RATIO_ROUNDOFF`` = 1e-12 of round-off, so ``threshold=1.0`` keeps exactly the
    components whose eigenvalue is not zero to round-off.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Eigenvalues sorted descending; negatives count as 0.
    threshold : float in (0, 1]

    Returns
    -------
    int
        Between 1 and n.
    """
    positive = np.clip(np.asarray(values, dtype=np.float64), 0.0, None)
    total = positive.sum()
    if total <= 0:
        return 1
    ratios = np.cumsum(positive) / total
    index = int(np.searchsorted(ratios, threshold - RATIO_ROUNDOFF, side="left"))
    return min(index + 1, positive.size)


def select_count(values, n_components, max_components=None):
    """How many of the sorted ``values`` ``n_components`` keeps (see :func:`spectral_pairs`).

    An int keeps that many; a float t keeps :func:`n_components_for_ratio`; ``"nonzero"``
    keeps the values above ``ZERO_EIGENVALUE_RATIO`` times the largest (at least one); None
    keeps all. ``max_components`` caps the result.
    """
    if n_components is None:
        keep = values.shape[0]
    elif isinstance(n_components, str):
        top = values[0] if values.size else 0.0
        keep = max(1, int(np.sum(values > ZERO_EIGENVALUE_RATIO * top)))
    elif isinstance(n_components, (int, np.integer)):
        keep = int(n_components)
    else:
        keep = n_components_for_ratio(values, float(n_components))
    if max_components is not None:
        keep = min(keep, max_components)
    return keep


def inverse_sqrt(values):
    """``values ** -0.5`` in float64, with 0 where a value is not positive (zero components
    project to 0, never to inf)."""
    values = np.asarray(values, dtype=np.float64)
    out = np.zeros_like(values)
    positive = values > 0
    out[positive] = 1.0 / np.sqrt(values[positive])
    return out


def column_signs(vectors):
    """The sign (+1 or -1, float64) of each column's entry of largest magnitude."""
    if vectors.size == 0:
        return np.ones(vectors.shape[1])
    rows = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[rows, np.arange(vectors.shape[1])]).astype(np.float64)
    signs[signs == 0] = 1.0
    return signs


def fix_signs(vectors):
    """Flip each column so that its entry of largest magnitude is positive. In place."""
    vectors *= column_signs(vectors).astype(vectors.dtype)
    return vectors
