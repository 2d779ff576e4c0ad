"""Landmark MDS at fit time (de Silva and Tenenbaum, 2004): classical MDS of the L x L
distances between L landmarks, then every point triangulated from its L landmark distances.

Time O(m L d) for the distances plus O(L^3) (or an iterative solve) for the landmark block;
memory O(L^2 + block L) beside X: the m x L distances are computed and triangulated one row
block at a time, never held whole. With L = m landmarks it is exact classical MDS.
"""

import numpy as np

from .._config import TRIANGULATION_BLOCK_ENTRIES
from .._eigen import check_finite_matrix
from .._validation.budget import check_dense_allocation
from ._mds_core import DISTANCE_REMEDY, embed_from_distances, triangulate


def choose_landmarks(distances_from, m, n_landmarks, method, rng):
    """Pick ``n_landmarks`` of the ``m`` points.

    Parameters
    ----------
    distances_from : callable
        ``distances_from(j)`` returns the (m,) distances from point j to every point.
    m, n_landmarks : int
    method : {"random", "maxmin"}
        ``"random"``: distinct points drawn by ``rng``, in index order. ``"maxmin"``: the
        first drawn by ``rng``, each next one the point farthest from those chosen (the
        lowest index among ties), in the order chosen; once every point coincides with a
        landmark, the lowest unchosen indices.
    rng : numpy RandomState

    Returns
    -------
    ndarray of int64, shape (n_landmarks,)
    """
    if method == "random":
        return np.sort(rng.choice(m, n_landmarks, replace=False)).astype(np.int64)
    chosen = np.empty(n_landmarks, dtype=np.int64)
    taken = np.zeros(m, dtype=bool)
    chosen[0] = rng.randint(m)
    taken[chosen[0]] = True
    nearest = np.asarray(distances_from(int(chosen[0])), dtype=np.float64)
    for i in range(1, n_landmarks):
        far = np.where(taken, -1.0, nearest)
        j = int(np.argmax(far))
        chosen[i] = j
        taken[j] = True
        np.minimum(nearest, distances_from(j), out=nearest)
    return chosen


def fit_landmark_mds(to_landmarks, m, landmarks, n_components, *, dtype, eigen_solver,
                     random_state, n_jobs):
    """Landmark MDS of m points from their distances to the landmarks.

    Parameters
    ----------
    to_landmarks : callable
        ``to_landmarks(rows)`` returns the (len(rows), L) distances from the points ``rows``
        (an index array or a slice) to the landmarks, columns in ``landmarks`` order.
    m : int
    landmarks : ndarray of int64, shape (L,)
    n_components : int or float
        As :func:`fastdr.manifold._mds_core.embed_from_distances`, on the L x L block.
    dtype : float dtype of the embedding
    eigen_solver, random_state, n_jobs
        For the landmark block's eigensolver and centring.

    Returns
    -------
    embedding : ndarray of shape (m, k), ``dtype``
        Each column's largest-magnitude entry positive.
    values : ndarray of shape (k,), float64
    vectors : ndarray of shape (L, k), float64
        Signed as ``embedding``: triangulating a point with them gives its row.
    sq_means : ndarray of shape (L,), float64
        Mean squared distance of each landmark to the others (``mu``).
    """
    n_landmarks = landmarks.shape[0]
    block = np.asarray(to_landmarks(landmarks), dtype=np.float64)
    values, vectors, sq_means = solve_landmark_block(
        block, n_components, eigen_solver=eigen_solver, random_state=random_state,
        n_jobs=n_jobs)
    embedding = np.empty((m, vectors.shape[1]), dtype=dtype)
    step = max(1, TRIANGULATION_BLOCK_ENTRIES // n_landmarks)
    for r0 in range(0, m, step):
        embedding[r0:r0 + step] = place(to_landmarks(slice(r0, min(m, r0 + step))),
                                        sq_means, vectors, values)
    vectors = sign_columns(embedding, vectors)
    return embedding, values, vectors, sq_means


def solve_landmark_block(block, n_components, *, eigen_solver, random_state, n_jobs):
    """Classical MDS of the (L, L) landmark distances (symmetrised here; overwritten).

    Returns
    -------
    values : ndarray of shape (k,), float64
    vectors : ndarray of shape (L, k), float64
    sq_means : ndarray of shape (L,), float64
    """
    n_landmarks = block.shape[0]
    check_dense_allocation((n_landmarks, n_landmarks), np.float64,
                           what=f"The {n_landmarks} x {n_landmarks} landmark distance block",
                           alternative="Use fewer landmarks (n_landmarks).")
    block = 0.5 * (block + block.T)  # the two orders of a pair may differ in the last bit
    np.fill_diagonal(block, 0.0)
    check_finite_matrix(block * block, "The squared landmark distances", DISTANCE_REMEDY)
    _, values, vectors, sq_means = embed_from_distances(
        block, n_components, eigen_solver=eigen_solver, random_state=random_state,
        n_jobs=n_jobs, what="The double-centred landmark distance matrix", overwrite=True)
    return (np.asarray(values, dtype=np.float64), np.asarray(vectors, dtype=np.float64),
            sq_means)


def place(distances, sq_means, vectors, values):
    """Triangulate a row block from its (rows, L) distances to the landmarks (float64)."""
    rows = np.asarray(distances, dtype=np.float64)
    sq = rows * rows
    check_finite_matrix(sq, "The squared distances to the landmarks", DISTANCE_REMEDY)
    return triangulate(sq, sq_means, vectors, values)


def sign_columns(embedding, vectors):
    """Flip columns in place so each one's largest-magnitude entry is positive (the exact
    route's convention); return ``vectors`` flipped alike, so triangulation agrees."""
    if not embedding.shape[0]:
        return vectors
    peak = np.abs(embedding).argmax(axis=0)
    signs = np.where(embedding[peak, np.arange(embedding.shape[1])] < 0, -1.0, 1.0)
    embedding *= signs.astype(embedding.dtype)
    return vectors * signs
