"""Locally linear embedding (Roweis & Saul, 2000): neighbours -> weights -> sparse M -> bottom
eigenvectors; the modified, Hessian and LTSA variants build their M from per-point blocks
(:mod:`fastdr.manifold._lle_methods`).

Each point is written as an affine combination of its k nearest neighbours (the barycentric
weights W, rows summing to 1, found by one regularised k x k solve per point); the embedding
is the set of ``n_components`` bottom eigenvectors of ``M = (I - W)^T (I - W)`` after the
constant one (eigenvalue 0, because ``(I - W) 1 = 0``). See
:mod:`fastdr._kernels.lle.weights` for the layout of W and :mod:`fastdr._kernels.lle.assembly`
for the race-free assembly of M, shared with the other methods.
"""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import connected_components

from .._base import BaseEstimator, TransformerMixin
from .._config import LLE_WEIGHT_BLOCK as _WEIGHT_BLOCK
from .._eigen import plan_solve, spectral_pairs
from .._kernels.lle import weights as lle_kernels
from .._runtime.progress import StageLog
from .._runtime.threads import parallel_section
from .._validation.arrays import check_array, check_is_fitted, check_query
from .._validation.feature_names import record_feature_names
from .._validation.params import N_JOBS, VERBOSE, Interval, StrOptions, validate_params
from ..neighbors import NearestNeighbors
from ..neighbors._search import NEIGHBORS_ALGORITHMS, from_sklearn_name
from ._lle_methods import (
    METHODS,
    block_matrix,
    hessian_min_neighbors,
    method_matrix,
    self_and_neighbours,
)

EIGEN_SOLVERS = ("auto", "arpack", "dense")
_WHAT = "The LLE matrix M = (I - W)^T (I - W)"


def barycenter_weights(Q, T, indices, reg, n_jobs):
    """Barycentric weights of each row of Q from its neighbours ``T[indices]`` (float64).

    Parameters
    ----------
    Q : ndarray of shape (q, d)
    T : ndarray of shape (n, d), same dtype as Q
    indices : ndarray of shape (q, k), int64
    reg : float
    n_jobs : int or None

    Returns
    -------
    weights : ndarray of shape (q, k)
        Row i reconstructs ``Q[i]`` from ``T[indices[i]]`` and sums to 1.
    n_retried : int
        Rows whose regularised local Gram matrix still had to be regularised further.
    """
    q, k = indices.shape
    weights = np.empty((q, k), dtype=np.float64)
    retries = np.empty(q, dtype=np.int64)
    with parallel_section(n_jobs):
        lle_kernels.barycenter_weights(Q, T, indices, float(reg), _WEIGHT_BLOCK, weights,
                                       retries)
    return weights, int(np.count_nonzero(retries))


def lle_matrix(weights, indices, n_jobs):
    """The sparse matrix ``M = (I - W)^T (I - W)`` from the row layout of W.

    Parameters
    ----------
    weights : ndarray of shape (m, k), float64
        Row i holds the weights reconstructing point i.
    indices : ndarray of shape (m, k), int64
        Neighbours of each point (never the point itself).
    n_jobs : int or None

    Returns
    -------
    scipy.sparse.csr_matrix of shape (m, m)
        Symmetric (bitwise), columns sorted in each row, int32 indices when they fit.
    """
    m, k = indices.shape
    rows = np.empty((m, k + 1), dtype=np.float64)  # u_i, row i of I - W on S_i
    rows[:, 0] = 1.0
    np.negative(weights, out=rows[:, 1:])
    return block_matrix(rows, self_and_neighbours(indices), m, n_jobs)


class LocallyLinearEmbedding(TransformerMixin, BaseEstimator):
    """Locally linear embedding (standard, modified, Hessian and LTSA) with numba kernels.

    A drop-in for scikit-learn's ``LocallyLinearEmbedding``: the same parameters, defaults
    and fitted attributes. Where scikit-learn builds the matrix M of the modified, Hessian
    and LTSA methods densely (m x m) in a Python loop over the points, fastdr computes each
    point's block in a parallel kernel and assembles M as a sparse matrix (memory O(m k^2)).

    Parameters
    ----------
    n_neighbors : int, default=5
        Neighbours per point, found by index (a duplicate of a point is a neighbour, the point
        itself is not). Must be smaller than the number of samples.
    n_components : int, default=2
        Embedding dimension; at most the number of features.
    reg : float, default=1e-3
        Regularisation of each local Gram matrix C: ``reg * trace(C)`` is added to its
        diagonal (``reg`` itself when the trace is 0, i.e. all neighbours coincide with the
        point). It keeps the weights finite when ``n_neighbors`` exceeds the intrinsic
        dimension.
    eigen_solver : {"auto", "arpack", "dense"}, default="auto"
        ``"dense"``: LAPACK on the dense m x m matrix (announced to the memory budget).
        ``"arpack"``: shift-invert Lanczos around 0 on the sparse matrix (one sparse LU; if
        M cannot be factored, a slightly shifted factorisation or LOBPCG is used, with a
        warning). ``"auto"``: dense for m <= 200 or when over 10% of the pairs are
        wanted, ARPACK otherwise.
    tol : float, default=1e-6
        ARPACK convergence tolerance.
    max_iter : int or None, default=100
        ARPACK iteration cap (None, a fastdr extra: ARPACK's default).
    method : {"standard", "hessian", "modified", "ltsa"}, default="standard"
        ``"standard"``: barycentric weights (Roweis & Saul). ``"hessian"``: Hessian
        eigenmaps (Donoho & Grimes); needs ``n_neighbors > n_components * (n_components + 3)
        / 2``. ``"modified"``: multiple weights per point (Zhang & Wang); needs
        ``n_neighbors >= n_components``. ``"ltsa"``: local tangent space alignment (Zhang &
        Zha); needs ``n_neighbors >= n_components``. The matrix M is the one scikit-learn
        builds, to round-off.
    hessian_tol : float, default=1e-4
        ``method="hessian"`` only: a column of a point's Hessian estimator whose sum is below
        this in magnitude is not rescaled.
    modified_tol : float, default=1e-12
        ``method="modified"`` only: a Householder step shorter than this is skipped.
    neighbors_algorithm : {"auto", "brute", "kd_tree", "ball_tree", "nndescent"}, default="auto"
        The :class:`fastdr.NearestNeighbors` algorithm of the neighbours of ``fit`` and
        :meth:`transform`. ``"ball_tree"`` (scikit-learn's name) is an alias of the exact
        ``"kd_tree"``. ``"nndescent"`` finds them approximately (about m log m work instead
        of m^2; worth it above roughly 50,000 points).
    random_state : int, RandomState or None
        Seeds ARPACK's starting vector.
    n_jobs : int or None
        Threads for this call only; None means all cores.
    verbose : int, default=0
        1 or more prints one line per stage of ``fit`` (neighbours, weights, matrix M,
        eigensolver) with its time and, for neighbour searches expected to last over ten
        seconds, a
        progress bar. A fastdr extra: scikit-learn's LocallyLinearEmbedding has no
        ``verbose``.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
        Orthonormal columns (the bottom eigenvectors of M after the constant one), with
        deterministic signs; float32 for float32 input.
    reconstruction_error_ : float
        Sum of the eigenvalues of the kept eigenvectors, ``trace(Y^T M Y)``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the features seen by ``fit``; only when X has string column names.
    nbrs_ : NearestNeighbors
        The fitted neighbour search over the training points (used by :meth:`transform`).

    Notes
    -----
    Time: exact k-NN, then O(m (k^2 d + k^3)) for the weights or local blocks, O(m k^2) for M,
    then one sparse LU and a few dozen triangular solves (ARPACK) or O(m^3) dense. Memory
    O(m k^2) beyond the factorisation. The output does not depend on ``n_jobs``.
    :meth:`transform` uses barycentric weights whatever the method, as scikit-learn does.
    Unlike scikit-learn, a duplicate of a point counts as its neighbour (the point itself
    never does). Sparse X is refused, as scikit-learn refuses it.

    Examples
    --------
    >>> import numpy as np
    >>> from fastdr import LocallyLinearEmbedding
    >>> t = np.linspace(0, 3, 60)
    >>> X = np.c_[np.cos(t), np.sin(t), 0.1 * t]
    >>> Y = LocallyLinearEmbedding(n_neighbors=6, n_components=1).fit_transform(X)
    >>> Y.shape
    (60, 1)
    """

    def __init__(self, *, n_neighbors=5, n_components=2, reg=1e-3, eigen_solver="auto",
                 tol=1e-6, max_iter=100, method="standard", hessian_tol=1e-4,
                 modified_tol=1e-12, neighbors_algorithm="auto", random_state=None,
                 n_jobs=None, verbose=0):
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.reg = reg
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.max_iter = max_iter
        self.method = method
        self.hessian_tol = hessian_tol
        self.modified_tol = modified_tol
        self.neighbors_algorithm = neighbors_algorithm
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "reg": [Interval(Real, 0, None, closed="left")],
        "eigen_solver": [StrOptions(EIGEN_SOLVERS)],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "method": [StrOptions(METHODS)],
        "hessian_tol": [Interval(Real, 0, None, closed="left")],
        "modified_tol": [Interval(Real, 0, None, closed="left")],
        "neighbors_algorithm": [StrOptions(NEIGHBORS_ALGORITHMS)],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
    }

    def _check_params(self):
        validate_params(self)
        _check_method_neighbors(self.method, self.n_neighbors, self.n_components)

    def fit(self, X, y=None):
        """Compute the embedding of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        log = StageLog(type(self).__name__, self.verbose)
        self._check_params()
        record_feature_names(self, X)
        X = check_array(X)
        m, d = X.shape
        k = self.n_neighbors
        if k >= m:
            fix = (f"Use n_neighbors <= {m - 1} or pass more samples."
                   if m - 1 > self.n_components else
                   f"Pass at least {self.n_components + 2} samples.")
            raise ValueError(
                f"Expected n_neighbors < n_samples, but n_samples = {m}, n_neighbors = {k}: "
                f"n_neighbors={k} must be smaller than the number of samples, n_samples={m}, "
                f"because each point is reconstructed from other points. {fix}"
            )
        if self.n_components > d:
            raise ValueError(
                "output dimension must be less than or equal to input dimension: "
                f"n_components={self.n_components}, but X has {d} features. Use "
                f"n_components <= {d}."
            )
        n_pairs = self.n_components + 1
        # resolve the solver and check its memory before the neighbours and weights
        solver = plan_solve(m, n_pairs, solver=self.eigen_solver, sparse=True, what=_WHAT,
                            work_copy_what="The dense LLE matrix M")

        nbrs = NearestNeighbors(n_neighbors=k,
                                algorithm=from_sklearn_name(self.neighbors_algorithm),
                                n_jobs=self.n_jobs, verbose=self.verbose).fit(X)
        indices = nbrs.kneighbors(return_distance=False)
        _warn_if_disconnected(indices)
        log.done(f"neighbours (k={k})")
        if self.method == "standard":
            weights, n_retried = barycenter_weights(X, X, indices, self.reg, self.n_jobs)
            _warn_if_retried(n_retried, m, self.reg)
            log.done("barycentre weights")
            M = lle_matrix(weights, indices, self.n_jobs)
        else:
            M = method_matrix(self.method, X, indices, self.n_components,
                              hessian_tol=self.hessian_tol, modified_tol=self.modified_tol,
                              n_jobs=self.n_jobs)
        log.done("matrix M")

        values, vectors = spectral_pairs(
            M, n_pairs, largest=False, solver=solver, what=_WHAT, tol=self.tol,
            max_iter=self.max_iter, random_state=self.random_state)
        log.done(f"eigensolver ({solver})")
        self.embedding_ = np.ascontiguousarray(vectors[:, 1:], dtype=X.dtype)
        self.reconstruction_error_ = float(np.sum(values[1:]))
        self.n_features_in_ = X.shape[1]
        self.nbrs_ = nbrs
        log.total()
        return self

    def fit_transform(self, X, y=None):
        """Fit to X and return ``embedding_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        return self.fit(X).embedding_

    def transform(self, X):
        """Embed new samples by their barycentric weights on the training points.

        Each sample's ``n_neighbors`` nearest training points are found, the regularised
        weights reconstructing it from them are computed as in ``fit``, and its embedding is
        the same weighted sum of the neighbours' ``embedding_`` rows.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries, n_components)
        """
        check_is_fitted(self, "embedding_")
        Q = check_query(self, X, "transform")
        T = self.nbrs_._fit_X
        Q = Q.astype(T.dtype, copy=False)
        indices = self.nbrs_.kneighbors(Q, return_distance=False)
        weights, n_retried = barycenter_weights(Q, T, indices, self.reg, self.n_jobs)
        _warn_if_retried(n_retried, Q.shape[0], self.reg)
        with parallel_section(self.n_jobs):
            Z = lle_kernels.weighted_rows(weights, indices, self.embedding_)
        return Z.astype(self.embedding_.dtype, copy=False)


def locally_linear_embedding(X, *, n_neighbors, n_components, reg=1e-3, eigen_solver="auto",
                             tol=1e-6, max_iter=100, method="standard", hessian_tol=1e-4,
                             modified_tol=1e-12, random_state=None, n_jobs=None):
    """Locally linear embedding of X (standard, modified, Hessian or LTSA).

    Fits a :class:`LocallyLinearEmbedding` with these parameters (its docstring has the
    details) and returns its ``embedding_`` and ``reconstruction_error_``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features), or a fitted NearestNeighbors
        The points to embed (a fitted :class:`fastdr.NearestNeighbors`, or scikit-learn's:
        its training points).
    n_neighbors : int
        Neighbours per point, found by index (a duplicate of a point is a neighbour, the point
        itself is not). Must be smaller than the number of samples.
    n_components : int
        Embedding dimension; at most the number of features.
    reg : float, default=1e-3
        Regularisation of each local Gram matrix C (standard method): ``reg * trace(C)`` is
        added to its diagonal (``reg`` itself when the trace is 0).
    eigen_solver : {"auto", "arpack", "dense"}, default="auto"
        ``"dense"``: LAPACK on the dense m x m matrix M; ``"arpack"``: shift-invert Lanczos
        around 0 on the sparse M; ``"auto"`` picks dense only for very small m.
    tol : float, default=1e-6
        ARPACK convergence tolerance.
    max_iter : int or None, default=100
        ARPACK iteration cap.
    method : {"standard", "hessian", "modified", "ltsa"}, default="standard"
        See :class:`LocallyLinearEmbedding`.
    hessian_tol : float, default=1e-4
        Tolerance of the Hessian method.
    modified_tol : float, default=1e-12
        Tolerance of the modified method.
    random_state : int, RandomState or None, default=None
        Seeds ARPACK's starting vector.
    n_jobs : int or None, default=None
        Threads for this call only; None means all cores.

    Returns
    -------
    embedding : ndarray of shape (n_samples, n_components)
    reconstruction_error : float
        ``trace(Y^T M Y)`` of the embedding Y.
    """
    if isinstance(X, NearestNeighbors) or (hasattr(X, "kneighbors") and hasattr(X, "fit")):
        check_is_fitted(X, "_fit_X")  # fastdr's or scikit-learn's NearestNeighbors
        X = X._fit_X
    est = LocallyLinearEmbedding(
        n_neighbors=n_neighbors, n_components=n_components, reg=reg, eigen_solver=eigen_solver,
        tol=tol, max_iter=max_iter, method=method, hessian_tol=hessian_tol,
        modified_tol=modified_tol, random_state=random_state, n_jobs=n_jobs).fit(X)
    return est.embedding_, est.reconstruction_error_


def _check_method_neighbors(method, n_neighbors, n_components):
    """Raise a ValueError for an ``n_neighbors`` too small for the method (sklearn's phrases)."""
    if method == "hessian" and n_neighbors < hessian_min_neighbors(n_components):
        raise ValueError(
            "for method='hessian', n_neighbors must be greater than "
            f"[n_components * (n_components + 3) / 2]; got n_neighbors={n_neighbors} with "
            f"n_components={n_components}. Use n_neighbors >= "
            f"{hessian_min_neighbors(n_components)} (or fewer components, or another method)."
        )
    if method in ("modified", "ltsa") and n_neighbors < n_components:
        lead = ("modified LLE requires n_neighbors >= n_components" if method == "modified"
                else "LTSA requires n_neighbors >= n_components")
        raise ValueError(
            f"{lead}; got n_neighbors={n_neighbors} with n_components={n_components}. Use "
            f"n_neighbors >= {n_components} (or fewer components)."
        )


def _warn_if_disconnected(indices):
    m, k = indices.shape
    graph = scipy.sparse.csr_matrix(
        (np.ones(m * k, dtype=np.int8), indices.ravel(), np.arange(0, m * k + 1, k)),
        shape=(m, m))
    n_parts, _ = connected_components(graph, directed=True, connection="weak")
    if n_parts > 1:
        warnings.warn(
            f"The {k}-nearest-neighbour graph has {n_parts} connected components, so M has "
            f"{n_parts} null vectors and the embedding mixes indicator vectors of the "
            "components with the geometry. Increase n_neighbors (or remove isolated groups "
            "of duplicate points).",
            RuntimeWarning,
            stacklevel=3,
        )


def _warn_if_retried(n_retried, m, reg):
    if n_retried:
        warnings.warn(
            f"{n_retried} of {m} local Gram matrices were singular even after adding "
            f"reg * trace with reg={reg!r}; extra regularisation was added to them. "
            "Increase reg (the default is 1e-3).",
            RuntimeWarning,
            stacklevel=3,
        )
