"""Landmark MDS over dask arrays.

1. L landmark rows drawn as the in-memory estimator draws them, gathered to the client;
2. classical MDS of their L x L distances on the client;
3. every row block's distances to the landmarks and its triangulation, one task per block.

The client holds O(L d + L^2) and ``embedding_`` (O(m c)); no task holds more than its
block's m_b x L distances.
"""

import dask
import dask.array as da
import numpy as np

from .._base import BaseEstimator, TransformerMixin
from .._validation.arrays import check_is_fitted
from .._validation.magnitudes import check_distance_magnitude
from .._validation.params import check_random_state, validate_params
from ..manifold._isomap_checks import check_embedding_size
from ..manifold._mds import ClassicalMDS as _LocalMDS
from ..manifold._mds_landmarks import choose_landmarks, place, sign_columns, solve_landmark_block
from ..pairwise import pairwise_distances
from ._utils import as_dask_queries, as_dask_rows, broadcast, stack_rows, task_n_jobs


def _place_block(block, landmarks, metric, metric_params, centre, sq_means, vectors, values,
                 dtype, n_jobs):
    """One row block placed from its distances to the landmark rows."""
    block = np.asarray(block)
    check_distance_magnitude(block, centre=centre)
    dist = pairwise_distances(block.astype(landmarks.dtype, copy=False), landmarks, metric,
                              metric_params=metric_params, n_jobs=task_n_jobs(n_jobs))
    return place(dist, sq_means, vectors, values).astype(dtype, copy=False)


class ClassicalMDS(TransformerMixin, BaseEstimator):
    """Landmark MDS of a row-chunked dask array.

    The embedding is the in-memory ``fastdr.ClassicalMDS(n_landmarks=L)``'s with the same
    ``random_state`` (to round-off: the row blocks differ).

    Parameters
    ----------
    n_components : int or float, default=2
        As in :class:`fastdr.ClassicalMDS`, on the L x L landmark block.
    metric, metric_params, eigen_solver, random_state :
        As in :class:`fastdr.ClassicalMDS` (not ``"precomputed"``).
    n_jobs : int or None, default=None
        Threads per task; None means the cores of the worker that runs it.
    n_landmarks : int
        Required: exact classical MDS needs the m x m matrix B, whose eigenvectors depend
        on every entry, so it does not split across workers.
    landmark_method : {"random"}, default="random"
        ``"maxmin"`` takes L passes over X, each waiting for the previous one; it is not
        offered here.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, ``n_components_``)
    eigenvalues_ : ndarray of shape (``n_components_``,)
    landmarks_ : ndarray of int64, shape (n_landmarks,)
    n_components_, n_features_in_ : int

    Notes
    -----
    Work O(m L d) for the distances and O(m L c) for the triangulation (distributed),
    O(L^2 d + L^3) on the client. Communication: the L landmark rows to every worker once,
    O(m c) back.
    """

    def __init__(self, n_components=2, *, metric="euclidean", metric_params=None,
                 eigen_solver="auto", random_state=None, n_jobs=None, n_landmarks=None,
                 landmark_method="random"):
        self.n_components = n_components
        self.metric = metric
        self.metric_params = metric_params
        self.eigen_solver = eigen_solver
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.n_landmarks = n_landmarks
        self.landmark_method = landmark_method

    def _local(self):
        """The in-memory estimator with these parameters (its checks and its metric)."""
        return _LocalMDS(self.n_components, metric=self.metric,
                         metric_params=self.metric_params, eigen_solver=self.eigen_solver,
                         random_state=self.random_state, n_jobs=self.n_jobs,
                         n_landmarks=self.n_landmarks, landmark_method=self.landmark_method)

    def _check_params(self, X):
        m = X.shape[0]
        if self.n_landmarks is None:
            raise ValueError(
                f"fastdr.dask.ClassicalMDS needs n_landmarks: exact classical MDS solves the "
                f"{m} x {m} matrix B ({8 * m * m / 2**30:.3g} GiB in float64), whose "
                "eigenvectors depend on every entry, so it does not split across workers. "
                "Pass n_landmarks=L (landmark MDS: the L x L block on the client, the rows on "
                "the workers), or use fastdr.ClassicalMDS on data in memory.")
        local = self._local()
        validate_params(local)
        if self.metric == "precomputed":
            raise ValueError("fastdr.dask.ClassicalMDS takes feature rows, not a precomputed "
                             "distance matrix; use fastdr.ClassicalMDS for that.")
        if self.landmark_method != "random":
            raise ValueError(
                f"landmark_method={self.landmark_method!r} is not offered by "
                "fastdr.dask.ClassicalMDS: 'maxmin' takes L passes over X, each waiting for "
                "the previous one. Use 'random', or fastdr.ClassicalMDS in memory.")
        n_components = local._check_n_components(m)
        check_embedding_size(n_components if isinstance(n_components, int) else 1, m,
                             self.n_landmarks)
        return n_components

    def fit(self, X, y=None):
        """Embed every row by landmark MDS.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features), chunked by rows
        y : ignored

        Returns
        -------
        self
        """
        X = as_dask_rows(X, "ClassicalMDS", min_samples=2)
        n_components = self._check_params(X)
        m = X.shape[0]
        rng = check_random_state(self.random_state)
        landmarks = choose_landmarks(None, m, self.n_landmarks, "random", rng)
        rows = np.ascontiguousarray(X[landmarks].compute())
        centre = check_distance_magnitude(rows)
        # (rows, rows), not (rows, None): the pairs as the in-memory fit computes them
        block = pairwise_distances(rows, rows, self.metric, metric_params=self.metric_params,
                                   n_jobs=self.n_jobs)
        values, vectors, sq_means = solve_landmark_block(
            block, n_components, eigen_solver=self.eigen_solver, random_state=rng,
            n_jobs=self.n_jobs)
        self._landmark_rows, self._centre = rows, centre
        embedding = self._place(X, sq_means, vectors, values, X.dtype).compute()
        self._vectors = sign_columns(embedding, vectors)
        self._sq_means, self._values = sq_means, values
        self.embedding_ = embedding
        self.eigenvalues_ = values.astype(X.dtype)
        self.n_components_ = int(values.shape[0])
        self.landmarks_ = landmarks
        self.n_features_in_ = int(X.shape[1])
        return self

    def _place(self, X, sq_means, vectors, values, dtype):
        rows = broadcast(dask.delayed(self._landmark_rows, pure=True))
        parts = [dask.delayed(_place_block, pure=True)(
            block, rows, self.metric, self.metric_params, self._centre, sq_means, vectors,
            values, dtype, self.n_jobs) for block in X.to_delayed().ravel()]
        return stack_rows(parts, X.chunks[0], vectors.shape[1], dtype)

    def transform(self, X):
        """Lazily place new points from their distances to the landmarks.

        Parameters
        ----------
        X : dask array of shape (n_queries, n_features)

        Returns
        -------
        dask array of shape (n_queries, ``n_components_``), with X's row chunks
        """
        check_is_fitted(self, "embedding_")
        X = as_dask_queries(X, self, "ClassicalMDS", "transform")
        return self._place(X, self._sq_means, self._vectors, self._values,
                           self.embedding_.dtype)

    def fit_transform(self, X, y=None):
        """Fit and return ``embedding_`` as a dask array with X's row chunks.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features), chunked by rows
        y : ignored
            Not used; present for API consistency.

        Returns
        -------
        dask array of shape (n_samples, ``n_components_``)
        """
        X = as_dask_rows(X, "ClassicalMDS", min_samples=2)
        self.fit(X)
        return da.from_array(self.embedding_, chunks=(X.chunks[0], self.n_components_))
