"""Classical MDS of Euclidean data without the m x m matrix: the PCA route.

For Euclidean distances the double-centred matrix is the Gram matrix of the centred rows,
``B = -1/2 J D^2 J = Xc Xc^T``. Its nonzero eigenvalues are those of the d x d scatter
``Xc^T Xc`` (the squared singular values of Xc), and its scaled eigenvectors are the PCA
scores: ``V Lambda^(1/2) = Xc W``, with W the scatter's unit eigenvectors. So the embedding
costs O(m d^2) time and O(d^2) memory beside X, not O(m^2 d) and an m x m array.

New points need no distances either: the landmark-MDS triangulation
``z = 1/2 Lambda^(-1/2) V^T (mu - delta)`` of a Euclidean point reduces to ``(x - mean) W``
(``V^T 1 = 0`` removes the terms in ``|x|^2`` and the mean squared norm, and
``V^T Xc = Lambda^(1/2) W^T``), so ``transform`` is the same projection as ``fit``.
"""

import numpy as np

from .._eigen.values import column_signs, select_count, zero_roundoff_eigenvalues
from ..decomposition._centred import project_centred
from ..decomposition._pca_solvers import fit_covariance, fit_full

#: Metric names whose distances are the Euclidean norm of the difference.
EUCLIDEAN_NAMES = ("euclidean", "l2")


def euclidean_route_applies(metric, metric_params):
    """Whether ``metric`` with ``metric_params`` is plain Euclidean distance."""
    params = dict(metric_params or {})
    if metric in EUCLIDEAN_NAMES:
        return not params
    if metric == "minkowski":
        return set(params) <= {"p"} and params.get("p", 2) == 2
    return False


def embed_euclidean(X, n_components):
    """Classical MDS of X under Euclidean distances, by the spectrum of the d x d scatter.

    Parameters
    ----------
    X : ndarray of shape (m, d), float32 or float64, finite
    n_components : int or float
        An int k (at most m), or a float share t of the positive eigenvalues of B (the
        same rule as the route through B).

    Returns
    -------
    embedding : ndarray of shape (m, k), X's dtype
        ``V Lambda^(1/2)`` of B; each column's largest-magnitude entry is positive.
    eigenvalues : ndarray of shape (k,), float64
        Top eigenvalues of B; the ones past the rank of Xc, and those zero to round-off,
        are exactly 0 (their coordinates are 0).
    mean : ndarray of shape (d,), float64
    axes : ndarray of shape (d, k), float64
        Unit eigenvectors of the scatter, signed as ``embedding``'s columns (zero columns for
        zero eigenvalues): ``transform`` is ``(x - mean) @ axes``.
    """
    m, d = X.shape
    # the whole spectrum of the scatter is at most d x d: all of it, for the float rule
    route = fit_covariance(X, None) if m >= d else fit_full(X, False)
    values = zero_roundoff_eigenvalues(route.values, m, X.dtype)
    # B is m x m: its spectrum is the scatter's padded with zeros
    keep = select_count(np.concatenate([values, np.zeros(max(0, m - values.shape[0]))]),
                        n_components, max_components=m)
    rank = min(keep, values.shape[0])
    eigenvalues = np.zeros(keep)
    eigenvalues[:rank] = values[:rank]
    axes = np.zeros((d, keep))
    positive = eigenvalues > 0
    axes[:, :rank] = route.vectors[:, :rank]
    axes[:, ~positive] = 0.0
    embedding = project_centred(X, route.mean, axes.T)
    # the sign convention of the route through B: each column's largest entry is positive
    signs = column_signs(embedding)
    embedding *= signs.astype(embedding.dtype)
    axes *= signs
    return np.ascontiguousarray(embedding), eigenvalues, route.mean, axes
