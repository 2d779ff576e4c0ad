"""Classical (Torgerson) multidimensional scaling with out-of-sample placement.

Textbook (Zhou, ch. 10.2): ``B = -1/2 J D^2 J`` formed in place in the one m x m distance
array, the top eigenpairs of B from the partial solver, ``Z = V Lambda^(1/2)``. New points are
placed by the landmark-MDS triangulation of de Silva and Tenenbaum (2004).
"""

from numbers import Integral, Real

import numpy as np

from .._base import BaseEstimator, TransformerMixin
from .._config import TRIANGULATION_BLOCK_ENTRIES
from .._distance.metric import NEIGHBOR_METRICS
from .._eigen import SOLVERS, check_finite_matrix
from .._eigen.implicit import choose_storage
from .._runtime.progress import StageLog
from .._validation.arrays import check_array, check_is_fitted, check_query
from .._validation.budget import check_dense_allocation
from .._validation.feature_names import check_feature_names, record_feature_names
from .._validation.magnitudes import check_distance_magnitude
from .._validation.matrices import check_precomputed_square
from .._validation.params import (
    N_JOBS,
    VERBOSE,
    Interval,
    StrOptions,
    check_n_components,
    check_random_state,
    validate_params,
)
from ..decomposition._centred import project_centred
from ..pairwise import pairwise_distances
from ._isomap_checks import check_embedding_size
from ._landmarks import LANDMARK_METHODS
from ._mds_core import (
    DISTANCE_REMEDY,
    embed_from_distances,
    embed_implicit,
    fused_mds_product,
    triangulate,
)
from ._mds_landmarks import choose_landmarks, fit_landmark_mds
from ._mds_linear import embed_euclidean, euclidean_route_applies

METRICS = NEIGHBOR_METRICS
_WHAT = "The double-centred distance matrix B"


# no output wrapping, as scikit-learn's ClassicalMDS (not a transformer there): arrays under any
# sklearn.set_config(transform_output=...), and no set_output
class ClassicalMDS(TransformerMixin, BaseEstimator, auto_wrap_output_keys=None):
    """Classical multidimensional scaling, with a ``transform`` for new points.

    Parameters
    ----------
    n_components : int or float, default=2
        An int keeps that many dimensions (at most ``n_samples``). A float ``t`` in (0, 1]
        keeps the smallest d' whose cumulative share of the positive eigenvalues of B is
        ``>= t`` (as PCA's threshold: on Euclidean distances both choose the same d'); a
        float needs the whole spectrum, so it uses the dense solver and a second m x m array.
    metric : str or callable, default="euclidean"
        Any metric of :func:`fastdr.pairwise_distances` (``"euclidean"``, ``"manhattan"``,
        ``"minkowski"``, ``"chebyshev"``, ``"cosine"``, ``"mahalanobis"``, ... or a callable,
        the slow path). ``"precomputed"``: ``fit`` takes the symmetric, non-negative (m, m)
        distance matrix and ``transform`` the (n_new, m) distances from new points to the
        training points.
    metric_params : dict or None, default=None
        The metric's parameters (``{"p": 3}``, ``{"VI": VI}``), as in scikit-learn.
    eigen_solver : {"auto", "dense", "arpack", "lobpcg", "randomized"}, default="auto"
        Solver for the top eigenpairs of B when B is formed (metrics other than Euclidean,
        and ``"precomputed"``). ``"auto"``: LAPACK for m <= 200 or when over 10% of the pairs
        are wanted, ARPACK up to m = 2000, ``"randomized"`` above. Euclidean input never forms
        B (see Notes).
    random_state : int, RandomState or None, default=None
        Seeds the iterative eigensolvers.
    n_jobs : int or None, default=None
        Threads for the distance and centring kernels.
    verbose : int, default=0
        1 or more prints one line per stage of ``fit`` (distances, double centring and
        eigensolver) with its time. A fastdr extra: scikit-learn's ClassicalMDS has no
        ``verbose``.
    distance_storage : {"auto", "stored", "implicit"}, default="auto"
        A fastdr extra, for metrics other than Euclidean. "stored" forms the m x m
        distances (overwritten by B; a MemoryBudgetError when they do not fit);
        "implicit" never stores them: each product of the iterative eigensolver rebuilds
        the distances by row blocks (memory O(block m + m n_components); one O(m^2 d) pass
        per product, so slower), and needs an int ``n_components`` and an iterative
        ``eigen_solver`` ("auto" then picks ARPACK up to 2,000 samples, else the randomized
        solver). "auto" stores them when they fit the memory budget and goes implicit
        otherwise. Both give the same embedding to round-off. Not used with
        ``n_landmarks``.
    n_landmarks : int or None, default=None
        A fastdr extra: landmark MDS (de Silva and Tenenbaum) with this many landmarks.
        Classical MDS of the L x L distances between the landmarks, then every point placed
        by triangulation from its distances to the landmarks: time O(m L d), memory
        O(L^2 + block L) (the m x L distances are never held whole), any metric and
        ``"precomputed"``. An approximation of the exact embedding, exact when the
        distances are Euclidean in at most ``n_components`` dimensions (or L = m); for
        Euclidean distances the default route is exact and faster. None: exact MDS.
    landmark_method : {"random", "maxmin"}, default="random"
        A fastdr extra, with ``n_landmarks``: ``"random"`` draws distinct points with
        ``random_state``; ``"maxmin"`` draws the first, then takes each time the point
        farthest from those chosen (better spread, L passes over the data).

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, ``n_components_``)
        ``V Lambda^(1/2)``; each column's largest-magnitude entry is positive.
    eigenvalues_ : ndarray of shape (``n_components_``,)
        Top eigenvalues of B. Negatives are clipped to 0 (with a warning when they are not
        round-off), and values that are zero to round-off are set to 0, so those
        dimensions are 0 in ``embedding_`` and in ``transform``.
    n_components_ : int
    n_features_in_ : int
        Features of X, or ``n_samples`` with ``metric="precomputed"``.
    dissimilarity_matrix_ : ndarray of shape (n_samples, n_samples)
        The distances that were embedded. fastdr does not keep a second m x m array: with
        ``metric="precomputed"`` this is the matrix passed to ``fit``; otherwise it is
        recomputed from the training points on each access.
    landmarks_ : ndarray of int64, shape (n_landmarks,)
        With ``n_landmarks``: the landmarks' rows in X (in index order for ``"random"``,
        in the order chosen for ``"maxmin"``). ``eigenvalues_`` are then those of the
        landmark block, and ``transform`` needs only the distances to the landmarks.

    Notes
    -----
    Euclidean distances (``"euclidean"``, ``"l2"``, ``"minkowski"`` with p = 2) take the PCA
    route: B is then the Gram matrix of the centred rows, whose nonzero eigenvalues are those
    of the d x d scatter matrix and whose embedding is the PCA scores. Time O(m d^2), memory
    O(d^2) beside X, the same embedding (up to round-off) as forming B; ``transform`` is the
    projection ``(x - mean) W``, O(n_new d k). Every other metric forms B: time O(m^2 d)
    for the distances plus a few passes over the m x m matrix for the eigensolver, memory
    one m x m array (distances overwritten by B), and ``transform`` costs O(n_new m (d + k)).
    With ``distance_storage="implicit"`` B is never stored: each of the eigensolver's passes
    costs O(m^2 d) again, and memory is O(m n_components) beside X.
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"),
                         Interval(Real, 0, 1, closed="right")],
        "metric": [StrOptions(METRICS), callable],
        "metric_params": [dict, None],
        "eigen_solver": [StrOptions(SOLVERS)],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
        "distance_storage": [StrOptions({"auto", "stored", "implicit"})],
        "n_landmarks": [Interval(Integral, 1, None, closed="left"), None],
        "landmark_method": [StrOptions(set(LANDMARK_METHODS))],
    }

    def __init__(self, n_components=2, *, metric="euclidean", metric_params=None,
                 eigen_solver="auto", random_state=None, n_jobs=None, verbose=0,
                 distance_storage="auto", n_landmarks=None, landmark_method="random"):
        self.n_components = n_components
        self.metric = metric
        self.metric_params = metric_params
        self.eigen_solver = eigen_solver
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.distance_storage = distance_storage
        self.n_landmarks = n_landmarks
        self.landmark_method = landmark_method

    def fit(self, X, y=None):
        """Embed the training samples (or the precomputed distance matrix).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        y : ignored

        Returns
        -------
        self
        """
        validate_params(self)
        record_feature_names(self, X)
        log = StageLog(type(self).__name__, self.verbose)
        for stale in ("_centre", "_fit_X", "_fit_D", "_mean", "_axes", "landmarks_"):
            self.__dict__.pop(stale, None)
        if self.n_landmarks is not None and self.distance_storage != "auto":
            raise ValueError(
                f"distance_storage={self.distance_storage!r} applies to exact MDS; with "
                f"n_landmarks={self.n_landmarks} no m x m distances are formed. Leave "
                "distance_storage='auto', or set n_landmarks=None for exact MDS.")
        if self.n_landmarks is not None:
            return self._fit_landmarks(X, log)
        if self.metric == "precomputed":
            D0 = check_precomputed_square(X, "The precomputed distance matrix",
                                          negative_ok=False, n_jobs=self.n_jobs)
            m = D0.shape[0]
            n_components = self._check_n_components(m)
            check_dense_allocation((m, m), D0.dtype, what=f"The {m} x {m} working copy of D",
                                   alternative="Pass n_landmarks=L (landmark MDS reads only "
                                               "the landmark columns), float32 distances or "
                                               "fewer samples.")
            D = np.array(D0, order="C", copy=True)
            self._fit_D = D0
            log.done("copy of the distances")
            self.n_features_in_ = m
        else:
            # a copy, as scikit-learn's copy_X=True: transform must not see later edits of X
            X = check_array(X, min_samples=2, copy=True)
            self._centre = check_distance_magnitude(X)
            n_components = self._check_n_components(X.shape[0])
            self.n_features_in_ = X.shape[1]
            self._fit_X = X
            if euclidean_route_applies(self.metric, self.metric_params):
                return self._fit_euclidean(X, n_components, log)
            m = X.shape[0]
            if choose_storage(self.distance_storage, m, X.dtype, n_components=n_components,
                              eigen_solver=self.eigen_solver, parameter="distance_storage",
                              what=f"The {m} x {m} distance matrix",
                              alternatives="n_landmarks=L (landmark MDS: O(m L d) time, "
                                           "no m x m array), float32 input or fewer "
                                           "samples.") == "implicit":
                return self._fit_implicit(X, n_components, log)
            D = self._distances(X, None)
            log.done(f"distances ({D.shape[0]} x {D.shape[0]})")
        dtype = D.dtype
        embedding, values, vectors, sq_means = embed_from_distances(
            D, n_components, eigen_solver=self.eigen_solver, random_state=self.random_state,
            n_jobs=self.n_jobs, what=_WHAT, overwrite=True)
        log.done("double centring and eigensolver")
        del D
        self.embedding_ = np.ascontiguousarray(embedding, dtype=dtype)
        self.eigenvalues_ = values.astype(dtype)
        self.n_components_ = int(values.shape[0])
        self._vectors = vectors
        self._sq_means = sq_means
        log.total()
        return self

    def _fit_euclidean(self, X, n_components, log):
        """The PCA route (see Notes): no distances, no m x m array."""
        embedding, values, mean, axes = embed_euclidean(X, n_components)
        log.done(f"centred scatter ({X.shape[1]} x {X.shape[1]}) and eigensolver")
        self.embedding_ = np.ascontiguousarray(embedding, dtype=X.dtype)
        self.eigenvalues_ = values.astype(X.dtype)
        self.n_components_ = int(values.shape[0])
        self._mean, self._axes = mean, axes
        log.total()
        return self

    def _fit_implicit(self, X, n_components, log):
        """B never stored: the eigensolver's products rebuild the distances by row blocks."""
        embedding, values, vectors, sq_means, passes = embed_implicit(
            lambda start, stop: self._distances(X[start:stop], X), X.shape[0], X.dtype,
            n_components, eigen_solver=self.eigen_solver, random_state=self.random_state,
            what=_WHAT, product=fused_mds_product(X, self.metric, self.metric_params,
                                                  self.n_jobs))
        log.done(f"eigensolver on the implicit B ({X.shape[0]} x {X.shape[0]}, never "
                 f"stored): {passes} passes over the distances")
        self.embedding_ = np.ascontiguousarray(embedding, dtype=X.dtype)
        self.eigenvalues_ = values.astype(X.dtype)
        self.n_components_ = int(values.shape[0])
        self._vectors = vectors
        self._sq_means = sq_means
        log.total()
        return self

    def _fit_landmarks(self, X, log):
        """Landmark MDS (see ``n_landmarks``): the L x L block, then row blocks of m x L."""
        if self.metric == "precomputed":
            D0 = check_precomputed_square(X, "The precomputed distance matrix",
                                          negative_ok=False, n_jobs=self.n_jobs)
            self._fit_D = D0
            self.n_features_in_ = m = D0.shape[0]
            dtype = D0.dtype

            def distances(rows, cols):
                return D0[rows][:, cols]
        else:
            X = check_array(X, min_samples=2, copy=True)
            self._centre = check_distance_magnitude(X)
            self._fit_X = X
            self.n_features_in_ = X.shape[1]
            m, dtype = X.shape[0], X.dtype

            def distances(rows, cols):
                return self._distances(X[rows], X[cols])
        n_components = self._check_n_components(m)
        check_embedding_size(n_components if isinstance(n_components, Integral) else 1, m,
                             self.n_landmarks)
        rng = check_random_state(self.random_state)
        # X against the one row (not the row against X): the kernels' blocks run over the
        # first argument's rows, and a one-row second argument costs nothing to pack
        landmarks = choose_landmarks(lambda j: distances(slice(None), [j])[:, 0], m,
                                     self.n_landmarks, self.landmark_method, rng)
        log.done(f"landmarks ({self.landmark_method}, L={self.n_landmarks})")
        embedding, values, vectors, sq_means = fit_landmark_mds(
            lambda rows: distances(rows, landmarks), m, landmarks, n_components, dtype=dtype,
            eigen_solver=self.eigen_solver, random_state=rng, n_jobs=self.n_jobs)
        log.done(f"landmark block ({self.n_landmarks} x {self.n_landmarks}), eigensolver "
                 f"and triangulation of {m} points")
        self.embedding_ = embedding
        self.eigenvalues_ = values.astype(dtype)
        self.n_components_ = int(values.shape[0])
        self.landmarks_ = landmarks
        self._vectors = vectors
        self._sq_means = sq_means
        log.total()
        return self

    def _distances(self, X, Y):
        """Distances in the chosen metric (float, X's dtype) through the blocked kernels."""
        return pairwise_distances(X, Y, self.metric, metric_params=self.metric_params,
                                  n_jobs=self.n_jobs)

    @property
    def dissimilarity_matrix_(self):
        """The (n_samples, n_samples) distances that ``fit`` embedded (recomputed)."""
        check_is_fitted(self, "embedding_")
        if self.metric == "precomputed":
            return self._fit_D
        return self._distances(self._fit_X, None)

    def _check_n_components(self, m):
        return check_n_components(self.n_components, m, estimator="ClassicalMDS",
                                  limit="n_samples", allow_none=False)

    def fit_transform(self, X, y=None):
        """Fit and return ``embedding_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Training samples, or the symmetric, non-negative distance matrix when
            ``metric="precomputed"``.
        y : ignored
            Not used; present for API consistency.

        Returns
        -------
        ndarray of shape (n_samples, ``n_components_``)
        """
        return self.fit(X).embedding_

    def transform(self, X):
        """Place new points by landmark-MDS triangulation.

        ``z = 1/2 Lambda^(-1/2) V^T (mu - delta)``, where ``delta`` holds the new point's
        squared distances to the training points and ``mu`` their mean squared distances.
        Applied to the training points it returns ``embedding_``.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features), or (n_new, n_samples) distances to the
            training points with ``metric="precomputed"``.

        Returns
        -------
        ndarray of shape (n_new, ``n_components_``)
        """
        check_is_fitted(self, "embedding_")
        m = self.embedding_.shape[0]
        if self.metric == "precomputed":
            # the column count is checked below, with a message about distances
            check_feature_names(self, X)
            dist = check_array(X, name="The precomputed distances")
            if dist.shape[1] != m:
                raise ValueError(
                    f"The precomputed distances have {dist.shape[1]} columns, but "
                    f"ClassicalMDS was fitted on {m} samples. Pass the (n_new, {m}) distances "
                    "from the new points to the training points."
                )
            if dist.min() < 0:
                raise ValueError(
                    f"The precomputed distances have a negative entry ({dist.min():.3g}); "
                    "distances must be >= 0."
                )
            if self.__dict__.get("landmarks_") is not None:
                dist = dist[:, self.landmarks_]
            dtype, n_new = dist.dtype, dist.shape[0]

            def distances(start, stop):
                return dist[start:stop]
        else:
            X_valid = check_query(self, X, "transform")
            X_valid = X_valid.astype(self._fit_X.dtype, copy=False)
            check_distance_magnitude(X_valid, centre=self._centre)
            if getattr(self, "_axes", None) is not None:  # the Euclidean (PCA) route
                return project_centred(X_valid, self._mean, self._axes.T)
            train = (self._fit_X if self.__dict__.get("landmarks_") is None
                     else self._fit_X[self.landmarks_])
            dtype, n_new = X_valid.dtype, X_valid.shape[0]

            def distances(start, stop):
                return self._distances(X_valid[start:stop], train)
        return self._triangulate_blocks(distances, n_new, dtype)

    def _triangulate_blocks(self, distances, n_new, dtype):
        """Triangulate ``n_new`` points, ``distances(start, stop)`` giving a row block of their
        distances to the training points (or landmarks): no (n_new, m) array in float64."""
        vectors = self._vectors.astype(np.float64)
        values = self.eigenvalues_.astype(np.float64)
        n_cols = vectors.shape[0]
        # at least 256 rows a block: each block re-reads the training points once
        step = max(256, TRIANGULATION_BLOCK_ENTRIES // max(1, n_cols))
        Z = np.empty((n_new, vectors.shape[1]), dtype=dtype)
        for start in range(0, n_new, step):
            sq_dists = np.square(distances(start, start + step), dtype=np.float64)
            check_finite_matrix(sq_dists, "The matrix of squared distances to the training "
                                "points", DISTANCE_REMEDY)
            Z[start:start + step] = triangulate(sq_dists, self._sq_means, vectors, values)
        return Z
