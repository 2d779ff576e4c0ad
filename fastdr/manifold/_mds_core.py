"""Classical MDS core shared by ClassicalMDS and Isomap: embed, and place new points.

Textbook (Zhou, ch. 10.2): ``B = -1/2 J D^2 J``, ``Z = V_k Lambda_k^(1/2)``. New points are
placed by the landmark-MDS triangulation of de Silva and Tenenbaum (2004):
``z = 1/2 Lambda_k^(-1/2) V_k^T (mu - delta)``, where ``delta`` holds the new point's squared
distances to the training points and ``mu`` their mean squared distances.
"""

import numpy as np

from .._config import EIGEN_ARPACK_MAX_N
from .._distance.metric import resolve_neighbors_metric
from .._eigen import check_finite_row_means, spectral_pairs
from .._eigen.implicit import ImplicitCentredMatrix, fused_product
from .._eigen.values import inverse_sqrt
from .._kernels.codes import CHEBYSHEV, MANHATTAN, MINKOWSKI, SQEUCLIDEAN
from .._kernels.spectral.centering import double_centre_inplace
from .._kernels.spectral.distance_product import HALF_SQUARE
from .._runtime.threads import parallel_section

#: What to do when the squared distances overflow the working dtype.
DISTANCE_REMEDY = ("The squared distances overflow the data's dtype: scale the data first (for "
                   "example with sklearn.preprocessing.StandardScaler), or pass float64.")


def embed_from_distances(D, n_components, *, eigen_solver="auto", random_state=None,
                         n_jobs=None, what="The double-centred distance matrix",
                         overwrite=False, tol=0.0, max_iter=None):
    """Classical MDS of a symmetric distance matrix, overwriting it with B.

    Parameters
    ----------
    D : ndarray of shape (m, m), float32 or float64, C-contiguous
        Distances (not squared). Overwritten with ``B = -1/2 J D^2 J``: no second m x m array.
    n_components : int or float
        An int, or a float share of the positive eigenvalues (see
        :func:`fastdr._eigen.spectral_pairs`).
    eigen_solver : str
        See :func:`fastdr._eigen.resolve_solver`.
    random_state : int, RandomState or None
    n_jobs : int or None
    what : str
        Name of B in messages and in the negative-eigenvalue warning.
    overwrite : bool, default=False
        Let the dense solver destroy B (no m x m work copy); B is then garbage on return.
    tol, max_iter : float, int or None
        Convergence settings of the iterative solvers (ARPACK's ``tol``, 0 = machine
        precision).

    Returns
    -------
    embedding : ndarray of shape (m, k)
        ``V Lambda^(1/2)``.
    eigenvalues : ndarray of shape (k,), float64
        Top eigenvalues of B, negatives clipped to 0 (with a warning when not round-off) and
        round-off ones set to 0.
    vectors : ndarray of shape (m, k)
    sq_means : ndarray of shape (m,)
        Mean squared distance of each training point (``mu``, for :func:`triangulate`).

    Raises
    ------
    ValueError
        When the squared distances are not finite in D's dtype.
    """
    with parallel_section(n_jobs):
        sq_means = double_centre_inplace(D, True, -0.5)
    check_finite_row_means(sq_means, "The squared distance matrix", DISTANCE_REMEDY)
    values, vectors = spectral_pairs(
        D, n_components, largest=True, solver=eigen_solver, what=what, psd=True,
        zero_roundoff=True, finite_checked=True, remedy=DISTANCE_REMEDY,
        random_state=random_state, overwrite_a=overwrite, tol=tol, max_iter=max_iter)
    embedding = vectors * np.sqrt(values).astype(vectors.dtype)
    return embedding, values, vectors, sq_means


def embed_implicit(rows, m, dtype, n_components, *, eigen_solver="auto", random_state=None,
                   what="The double-centred distance matrix", product=None):
    """Classical MDS with ``B = -1/2 J D^2 J`` never stored: each product of the iterative
    eigensolver rebuilds the squared distances by row blocks (:mod:`fastdr._eigen.implicit`).

    Parameters
    ----------
    rows : callable
        ``rows(start, stop)`` returns the distances (not squared) from samples
        ``start .. stop`` to every sample, shape (stop - start, m).
    m : int
    dtype : numpy dtype
    n_components : int
        An int (the iterative solvers compute a few pairs).
    eigen_solver : {"auto", "arpack", "lobpcg", "randomized"}
        "auto": ARPACK up to 2,000 samples, the randomized solver above.
    random_state : int, RandomState or None
    what : str
    product : callable or None
        ``product(V)`` returns ``(-1/2 D^2) V`` in one fused call (see
        :func:`fastdr._eigen.implicit.fused_product`); None builds it from ``rows``.

    Returns
    -------
    embedding, eigenvalues, vectors, sq_means, passes
        As :func:`embed_from_distances`, and the passes over the distances.
    """
    if eigen_solver == "auto":
        eigen_solver = "arpack" if m <= EIGEN_ARPACK_MAX_N else "randomized"

    def half_squares(start, stop, out):
        D = rows(start, stop)
        with np.errstate(over="ignore", invalid="ignore"):  # checked on the row means
            np.multiply(D, D, out=out)
        out *= -0.5
        return out

    A = ImplicitCentredMatrix(half_squares, m, dtype, what="The squared distance matrix",
                              remedy=DISTANCE_REMEDY, product=product)
    # a pass costs the O(m^2 d) distances whatever the block's width, and a wider block
    # converges in fewer passes (2 components: 24 passes at the default width, 13 at +8)
    values, vectors = spectral_pairs(
        A, n_components, largest=True, solver=eigen_solver, what=what, psd=True,
        zero_roundoff=True, finite_checked=True, remedy=DISTANCE_REMEDY,
        random_state=random_state,
        n_oversamples=max(8, n_components // 2) if eigen_solver == "randomized" else None)
    embedding = vectors * np.sqrt(values).astype(vectors.dtype)
    return embedding, values, vectors, -2.0 * A.row_means, A.passes


def fused_mds_product(X, metric, metric_params, n_jobs):
    """The fused product ``V -> (-1/2 D^2) V`` for the Minkowski family and the metrics
    that are Euclidean on mapped rows (mahalanobis, seuclidean, sqeuclidean); None for the
    others (cosine, the pair-by-pair metrics, callables), which build row blocks."""
    if callable(metric):
        return None
    params = dict(metric_params or {})
    spec = resolve_neighbors_metric(metric, params.pop("p", None) if metric == "minkowski"
                                    else None, params, X.shape[1], warn_p=False)
    if spec.route == "euclidean":
        code, p, power = SQEUCLIDEAN, 2.0, (2.0 if spec.squared else 1.0)
    elif spec.route == "minkowski" and spec.kind in (MANHATTAN, CHEBYSHEV):
        code, p, power = spec.kind, 1.0, 2.0
    elif spec.route == "minkowski" and spec.kind == MINKOWSKI:
        code, p, power = MINKOWSKI, spec.p, 2.0 / spec.p
    else:
        return None
    return fused_product(spec.transform_rows(X), code, p, HALF_SQUARE, 0.0, power, n_jobs)


def triangulate(sq_dists, sq_means, vectors, eigenvalues):
    """Place new points from their squared distances to the training points.

    Parameters
    ----------
    sq_dists : ndarray of shape (n_new, m)
        Squared distances from each new point to every training point.
    sq_means : ndarray of shape (m,)
    vectors : ndarray of shape (m, k)
    eigenvalues : ndarray of shape (k,)
        Components with a zero eigenvalue get coordinate 0 (never a division by zero).

    Returns
    -------
    ndarray of shape (n_new, k)
    """
    sq_dists = np.asarray(sq_dists, dtype=np.float64)
    scale = 0.5 * inverse_sqrt(eigenvalues)
    return ((sq_means[None, :] - sq_dists) @ vectors) * scale
