"""Classical MDS core shared by ClassicalMDS and Isomap: embed, and place new points.

Textbook (Zhou, ch. 10.2): ``B = -1/2 J D^2 J``, ``Z = V_k Lambda_k^(1/2)``. New points are
placed by the landmark-MDS triangulation of de Silva and Tenenbaum (2004):
``z = 1/2 Lambda_k^(-1/2) V_k^T (mu - delta)``, where ``delta`` holds the new point's squared
distances to the training points and ``mu`` their mean squared distances.
"""

import numpy as np

from .._eigen import clip_negative_eigenvalues, symmetric_eigenpairs
from .._kernels.centering import double_centre_inplace
from .._parallel import parallel_section


def embed_from_distances(D, n_components, *, eigen_solver="auto", random_state=None,
                         n_jobs=None, what="The double-centred distance matrix"):
    """Classical MDS of a symmetric distance matrix, overwriting it.

    Parameters
    ----------
    D : ndarray of shape (m, m), float32 or float64, C-contiguous
        Distances (not squared). Overwritten with ``B = -1/2 J D^2 J``: no second m x m array.
    n_components : int
    eigen_solver : str
        Passed to :func:`fastdr._eigen.symmetric_eigenpairs`.
    random_state : int, RandomState or None
    n_jobs : int or None
    what : str
        Name used in the negative-eigenvalue warning.

    Returns
    -------
    embedding : ndarray of shape (m, n_components)
    eigenvalues : ndarray of shape (n_components,)
        Top eigenvalues of B, negatives clipped to 0 (with a warning when not round-off).
    vectors : ndarray of shape (m, n_components)
    sq_means : ndarray of shape (m,)
        Mean squared distance of each training point (``mu``, for :func:`triangulate`).
    """
    with parallel_section(n_jobs):
        sq_means = double_centre_inplace(D, True, -0.5)
    values, vectors = symmetric_eigenpairs(D, n_components, largest=True, solver=eigen_solver,
                                           random_state=random_state)
    values = clip_negative_eigenvalues(values, what=what)
    embedding = vectors * np.sqrt(values)
    return embedding, values, vectors, sq_means


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
    scale = np.zeros_like(eigenvalues, dtype=np.float64)
    positive = eigenvalues > 0
    scale[positive] = 0.5 / np.sqrt(eigenvalues[positive])
    return ((sq_means[None, :] - sq_dists) @ vectors) * scale
