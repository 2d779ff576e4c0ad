"""Input and parameter checks shared by every public estimator and function.

All user-facing errors live in the public tier; kernels assume validated input. Every message
says what was expected, what was received, and what to do instead.
"""


import numpy as np

#: A square matrix counts as symmetric when ``max |A - A^T| <= SYMMETRY_RTOL * max |A|``.
SYMMETRY_RTOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}



def check_symmetric(A, what, *, asymmetry=None, biggest=None):
    """Raise unless ``A`` is symmetric to within its dtype's round-off (one rule for all).

    The rule: ``max |A - A^T| <= SYMMETRY_RTOL[dtype] * max |A|`` (1e-10 for float64, 1e-5
    for float32).

    Parameters
    ----------
    A : ndarray of shape (n, n)
    what : str
        How the matrix is called in the message.
    asymmetry, biggest : float or None
        ``max |A - A^T|`` and ``max |A|`` when the caller has them already.
    """
    if asymmetry is None:
        A64 = np.asarray(A, dtype=np.float64)
        asymmetry = float(np.abs(A64 - A64.T).max()) if A64.size else 0.0
        biggest = float(np.abs(A64).max()) if A64.size else 0.0
    dtype = np.dtype(A.dtype) if np.dtype(A.dtype) in SYMMETRY_RTOL else np.dtype(np.float64)
    if asymmetry > SYMMETRY_RTOL[dtype] * biggest:
        raise ValueError(
            f"Array must be symmetric: {what} is not (the largest asymmetry |A - A.T| is "
            f"{asymmetry:.3g}, the largest entry {biggest:.3g}). Pass (A + A.T) / 2 if the "
            "asymmetry is round-off."
        )



def check_precomputed_square(A, what, *, negative_ok, n_jobs=None):
    """Validate a precomputed square matrix: finite, square, symmetric, (non-negative).

    Parameters
    ----------
    A : array-like of shape (m, m)
    what : str
        How the matrix is called in messages.
    negative_ok : bool
        Allow negative entries (kernels); distances must be non-negative.
    n_jobs : int or None
        Threads of the one-pass check.

    Returns
    -------
    ndarray
        The validated array (not copied unless conversion required it).
    """
    from .._kernels.distances.matrix_checks import symmetry_stats  # numba: imported on first use
    from .._runtime.threads import parallel_section
    from .arrays import check_array

    A = check_array(A, name=what, min_samples=2)
    if A.shape[0] != A.shape[1]:
        raise ValueError(
            f"array must be 2-dimensional and square: {what} has shape {A.shape}. With a "
            "precomputed metric or kernel, pass the matrix between the training samples."
        )
    with parallel_section(n_jobs):
        asym, biggest, smallest = symmetry_stats(A)
    check_symmetric(A, what, asymmetry=asym, biggest=biggest)
    if not negative_ok and smallest < 0:
        raise ValueError(
            f"{what} has a negative entry ({smallest:.3g}); distances must be >= 0. Pass a "
            "matrix of distances (not similarities or log-distances)."
        )
    return A

