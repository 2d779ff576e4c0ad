"""Landmark Isomap (de Silva and Tenenbaum, 2003): geodesics from L landmarks only, classical
MDS of the L x L landmark block, and triangulation of every point from its L distances.

Memory O(m L): the m x L landmark geodesic matrix is the only large array.
"""

from typing import NamedTuple

import numpy as np

from .._config import TRIANGULATION_BLOCK_ENTRIES as _BLOCK_ENTRIES
from .._runtime.progress import StageLog
from ._geodesic import landmark_columns, locality_order, maxmin_columns, renumber
from ._mds_core import embed_from_distances, triangulate

LANDMARK_METHODS = ("random", "maxmin")


class LandmarkFit(NamedTuple):
    """What a landmark fit keeps. ``columns`` rows follow the graph's locality order:
    row ``rank[i]`` belongs to point i."""

    landmarks: np.ndarray
    columns: np.ndarray
    rank: np.ndarray
    eigenvalues: np.ndarray
    vectors: np.ndarray
    sq_means: np.ndarray
    block_frobenius_sq: float
    embedding: np.ndarray


def fit_landmarks(graph, n_landmarks, *, method, rng, n_components, eigen_solver, dtype,
                  n_jobs, log=None, tol=0.0, max_iter=None):
    """Landmark Isomap on a connected graph.

    Parameters
    ----------
    graph : Graph
    n_landmarks : int
    method : {"random", "maxmin"}
        ``"random"``: L distinct nodes drawn by ``rng``; ``"maxmin"``: the first drawn by
        ``rng``, each next one the node farthest from those chosen (geodesic distance).
    rng : numpy RandomState
    n_components : int
    eigen_solver : str
    dtype : float dtype of the m x L matrix
    n_jobs : int or None
    log : StageLog or None
        Reports the stages (and a bar over the landmark Dijkstra runs) when verbose.
    tol, max_iter : float, int or None
        Convergence settings of the iterative eigensolvers.

    Returns
    -------
    LandmarkFit
    """
    log = StageLog("", 0) if log is None else log
    m = graph.n_nodes
    order, rank = locality_order(graph)
    local = renumber(graph, order, rank, n_jobs)
    if method == "random":
        landmarks = np.sort(rng.choice(m, n_landmarks, replace=False)).astype(np.int64)
        columns = landmark_columns(local, rank[landmarks], dtype=dtype, n_jobs=n_jobs,
                                   progress=log)
    else:
        first = int(rng.randint(m))
        columns, sources = maxmin_columns(local, n_landmarks, rank[first], dtype=dtype)
        landmarks = order[sources]
    check_geodesic_scale(columns, np.float64)
    log.done(f"landmark shortest paths ({method}, L={n_landmarks})")
    block = np.array(columns[rank[landmarks]], dtype=np.float64)
    block = 0.5 * (block + block.T)  # the two Dijkstra runs may differ in the last bit
    _, values, vectors, sq_means = embed_from_distances(
        block, n_components, eigen_solver=eigen_solver, random_state=rng, n_jobs=n_jobs,
        what="The double-centred landmark geodesic matrix", tol=tol, max_iter=max_iter)
    log.done("eigensolver (landmark block)")
    frobenius_sq = float(np.sum(block * block))
    embedding = triangulate_rows(columns, sq_means, vectors, values)[rank]
    log.done("triangulation")
    return LandmarkFit(landmarks, columns, rank, values, vectors, sq_means, frobenius_sq,
                       embedding)


def triangulate_rows(distances, sq_means, vectors, eigenvalues):
    """Triangulate every row of an (n, L) distance matrix, in blocks of float64 scratch."""
    n, n_landmarks = distances.shape
    out = np.empty((n, vectors.shape[1]), dtype=np.float64)
    step = max(1, _BLOCK_ENTRIES // max(1, n_landmarks))
    for r0 in range(0, n, step):
        block = np.asarray(distances[r0:r0 + step], dtype=np.float64)
        out[r0:r0 + step] = triangulate(block * block, sq_means, vectors, eigenvalues)
    return out


def check_geodesic_scale(D, dtype):
    """Refuse geodesic distances whose squares overflow ``dtype`` in classical MDS."""
    largest = float(np.max(D)) if D.size else 0.0
    limit = float(np.finfo(dtype).max) / 16
    if not largest * largest <= limit:
        raise ValueError(
            f"The geodesic distances reach {largest:.3g}, so their squares overflow "
            f"{np.dtype(dtype).name} in classical MDS (the largest usable distance is about "
            f"{np.sqrt(limit):.1g}). Scale the data first, for example with "
            "sklearn.preprocessing.StandardScaler"
            + (", or use dtype=np.float64." if np.dtype(dtype) == np.float32 else ".")
        )
