"""MMC, Mahalanobis Metric for Clustering (Xing, Ng, Jordan and Russell, 2002)."""

import contextlib
import warnings
from numbers import Integral, Real

import numpy as np

from .._base import BaseEstimator
from .._config import MMC_SINGLE_THREAD_MAX_DIM as _SMALL_DENSE
from .._kernels.learners import mmc as mmc_kernels
from .._runtime.blas import single_threaded_blas
from .._runtime.progress import IterationLog
from .._validation.arrays import check_array
from .._validation.feature_names import record_feature_names
from .._validation.magnitudes import check_distance_magnitude
from .._validation.params import Interval, StrOptions, check_random_state, validate_params
from ..exceptions import ConvergenceWarning, compatible
from ._base import (
    DEPRECATED,
    LEARNER_CONSTRAINTS,
    METRIC_LEARN_N_COMPONENTS,
    MahalanobisMixin,
    components_from_psd,
    metric_learn_n_components,
    project_psd,
    renamed,
)
from ._constraints import (
    check_index_pairs,
    labelled_pairs_to_indices,
    supervised_pairs,
)
from ._mmc_solvers import distance_sum, fit_diagonal, fit_full, kernel_threads, run_kernel
from ._pairs_classifier import PairsClassifierMixin, check_calibration_params
from ._tuples import fit_points, form_pairs, form_points, input_ndim, resolve_preprocessor

INITS = ("identity", "covariance", "random")


class _BaseMMC(MahalanobisMixin, BaseEstimator):
    """The MMC solve shared by :class:`MMC` and :class:`MMC_Supervised`."""

    _parameter_constraints = {
        **LEARNER_CONSTRAINTS,
        "n_components": METRIC_LEARN_N_COMPONENTS,
        "diagonal": ["boolean"],
        "diagonal_c": [Interval(Real, 0, None, closed="neither")],
        "max_proj": [Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions(INITS), "array-like"],
        "preprocessor": ["array-like", callable, None],
        "convergence_threshold": [DEPRECATED, Interval(Real, 0, None, closed="left")],
    }

    def _check_params(self):
        validate_params(self)

    def _initial_matrix(self, X, rng):
        d = X.shape[1]
        init = self.init
        if not isinstance(init, str):
            A = check_array(init, name="init", dtype=np.float64)
            if A.shape != (d, d):
                raise ValueError(
                    f"init must be a {d} x {d} matrix (one row and column per feature); got "
                    f"shape {A.shape}."
                )
            scale = max(np.abs(A).max(), np.finfo(np.float64).tiny)
            values = np.linalg.eigvalsh(0.5 * (A + A.T))
            if not np.allclose(A, A.T, rtol=1e-8, atol=1e-10 * scale) or \
                    values.min() < -1e-10 * max(values.max(), scale):
                raise ValueError(
                    "init must be a symmetric positive semidefinite matrix; its smallest "
                    f"eigenvalue is {values.min():.3g}. Project it onto the PSD cone first."
                )
            return project_psd(A)
        if init == "identity":
            return np.eye(d)
        if init == "covariance":
            cov = np.atleast_2d(np.cov(X, rowvar=False))
            values = np.linalg.eigvalsh(cov)
            if values.min() <= values.max() * d * np.finfo(np.float64).eps:
                # metric-learn's warning, word for word (its tests compare it)
                warnings.warn("The covariance matrix is not invertible: using the "
                              "pseudo-inverse instead.To make the covariance matrix "
                              "invertible you can remove any linearly dependent features "
                              "and/or reduce the dimensionality of your input, for instance "
                              "using `sklearn.decomposition.PCA` as a preprocessing step.",
                              UserWarning, stacklevel=5)
            return np.linalg.pinv(cov, hermitian=True)
        B = rng.standard_normal((d, d))
        return B @ B.T / d + 1e-3 * np.eye(d)

    def _fit_pairs(self, X, must, cannot, rng, tol):
        with kernel_threads(self.n_jobs):
            return self._solve(X, must, cannot, rng, tol)

    def _solve(self, X, must, cannot, rng, tol):
        X = np.ascontiguousarray(X, dtype=np.float64)
        m, d = X.shape
        metric_learn_n_components(self.n_components, d, type(self).__name__,
                                  f"the factor of a {d} x {d} matrix has at most {d} rows")
        A0 = self._initial_matrix(X, rng)
        name = type(self).__name__
        log = IterationLog(name, self.max_iter, self.verbose)
        log.header()
        scatter_trace = float(run_kernel(mmc_kernels.pair_squared_sum, X, must[0], must[1],
                                         np.ones(must[0].shape[0])).sum())
        cannot_total, _ = distance_sum(X, cannot[0], cannot[1], np.eye(d))
        if scatter_trace == 0:
            raise ValueError(
                "Every must-link pair joins two identical points, so every metric gives "
                "them distance 0 and the problem has no unique answer. Pass must-link "
                "pairs of distinct points."
            )
        if cannot_total == 0:
            raise ValueError(
                "Every cannot-link pair joins two identical points, so no metric can "
                "separate them (the constraint sum_D d_M >= 1 is infeasible). Pass "
                "cannot-link pairs of distinct points."
            )

        def report(n_iter, M):
            if self.verbose:
                log.iteration(n_iter, _textbook_objective(X, must, cannot, M, self.diagonal))

        # the solvers run many small d x d eigendecompositions and solves: below a few
        # hundred features OpenBLAS threads only add synchronisation, so keep it on one
        blas = single_threaded_blas() if d <= _SMALL_DENSE else contextlib.nullcontext()
        with blas, _clear_linalg_errors(X):
            if self.diagonal:
                w, n_iter, converged = fit_diagonal(X, must, cannot, np.diag(A0).copy(),
                                                    max_iter=self.max_iter, tol=tol,
                                                    weight=float(self.diagonal_c),
                                                    report=report)
                M = np.diag(w)
            else:
                M, n_iter, converged = fit_full(X, must, cannot, A0, max_iter=self.max_iter,
                                                max_proj=self.max_proj, tol=tol,
                                                report=report)
        constraint, _ = distance_sum(X, cannot[0], cannot[1], M)
        if constraint > 0:
            M = M / constraint**2
            constraint, _ = distance_sum(X, cannot[0], cannot[1], M)
        objective = float(np.sum(run_kernel(mmc_kernels.pair_quadratic_forms, X, must[0],
                                            must[1], M)))
        log.close()
        if not converged:
            warnings.warn(
                f"[{name}] MMC did not converge within max_iter={self.max_iter} iterations. "
                "Increase max_iter or tol.",
                compatible(ConvergenceWarning),
                stacklevel=3,
            )
        self.components_ = components_from_psd(M, self.n_components)
        self.objective_ = objective
        self.constraint_ = float(constraint)
        self.n_iter_ = int(n_iter)
        self.converged_ = bool(converged)
        self.n_features_in_ = d
        return self


@contextlib.contextmanager
def _clear_linalg_errors(X):
    """Turn a LAPACK failure inside the solvers into an error that names its likely cause."""
    try:
        yield
    except np.linalg.LinAlgError as exc:
        spread = float(np.abs(X - X.mean(axis=0)).max())
        raise ValueError(
            f"MMC's eigen-decompositions failed ({exc}). X spreads over {spread:.3g} around "
            "its mean; at extreme scales (below about 1e-100 or above about 1e100) the d x d "
            "matrices of squared differences lose all precision. Scale the data first, for "
            "example with sklearn.preprocessing.StandardScaler."
        ) from exc


def _textbook_objective(X, must, cannot, M, diagonal):
    """``sum_S d_M^2`` after rescaling M onto ``sum_D d_M = 1`` (inf when that sum is 0)."""
    if diagonal:
        M = np.diag(M)
    total, _ = distance_sum(X, cannot[0], cannot[1], M)
    if total <= 0:
        return np.inf
    squared = run_kernel(mmc_kernels.pair_quadratic_forms, X, must[0], must[1], M)
    return float(np.sum(squared)) / total**2


class MMC(PairsClassifierMixin, _BaseMMC):
    """Mahalanobis Metric for Clustering: learn M from must-link and cannot-link pairs.

    Solves the textbook problem (Xing et al., 2002)

        minimise    sum_{(i, j) in S} d_M(x_i, x_j)^2
        subject to  sum_{(i, j) in D} d_M(x_i, x_j) >= 1,   M positive semidefinite,

    with S the must-link (similar) and D the cannot-link (dissimilar) pairs and
    ``d_M(x, y) = sqrt((x - y)^T M (x - y))``. The returned M meets the constraint with
    equality. metric-learn's ``MMC``: its parameters in its order, and its classifier of
    pairs (``predict``, ``decision_function``, ``score``, ``set_threshold``,
    ``calibrate_threshold``).

    Parameters
    ----------
    max_iter : int, default=100
        Iterations of the solver (gradient steps, or L-BFGS-B iterations); always bounds the
        run.
    max_proj : int, default=10000
        Projections onto the PSD cone per iteration of the full solver.
    tol : float, default=1e-3
        Full solver: stop when the step size relative to ``|M|_F`` falls below ``tol``.
        Diagonal solver: stop when an iteration changes the objective by less than ``tol``
        (relative).
    init : {"identity", "covariance", "random"} or ndarray of shape (d, d), \
default="identity"
        Starting M: the identity, the pseudo-inverse of the covariance of X, a random
        symmetric positive definite matrix, or a given PSD matrix. The diagonal solver
        starts from its diagonal.
    diagonal : bool, default=False
        Learn a diagonal M (feature weights) by L-BFGS-B instead of a full M by projected
        gradient ascent.
    diagonal_c : float, default=1.0
        Diagonal solver: the weight c of the cannot-link term in the objective it minimises,
        ``sum_S d_w^2 - c log(sum_D d_w)``. Its minimiser is c times the one for c = 1 (the
        objective is homogeneous in w), and the learned M is rescaled onto the constraint,
        so c changes the path of the iterates but not the answer.
    verbose : bool or int, default=False
        True prints one line per iteration with the textbook objective of the current
        iterate rescaled onto the constraint.
    preprocessor : array-like of shape (n_samples, n_features), callable or None, \
default=None
        With a preprocessor, pairs may be (n_pairs, 2) indices into it (and points, with
        ``must_link`` / ``cannot_link``, a 1-D array of indices).
    random_state : int, RandomState, Generator or None, default=None
        Seeds ``init="random"``.
    convergence_threshold : float or "deprecated", default="deprecated"
        metric-learn's old name of ``tol`` (FutureWarning).
    n_components : int or None, default=None
        Keyword-only. Keep the top ``n_components`` rows of the factor of M (``transform``
        then returns that many columns); None keeps all n_features rows.
    n_jobs : int or None, default=None
        Keyword-only. Threads of the pair kernels (None: all cores). Results do not depend
        on it.

    Attributes
    ----------
    components_ : ndarray of shape (r, n_features)
        P with ``P^T P`` the (top-r part of the) learned M; rows by decreasing eigenvalue.
    threshold_ : float
        The distance below which ``predict`` says similar, calibrated on the training pairs
        (``calibration_params``).
    objective_ : float
        ``sum_S d_M^2`` at the learned (full-rank) M.
    constraint_ : float
        ``sum_D d_M`` at the learned M (1 up to round-off).
    n_iter_ : int
    converged_ : bool
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int

    Notes
    -----
    Pairs enter only through sums of outer products and per-pair quadratic forms, computed
    by numba kernels over chunks of pairs with BLAS: time O(n_pairs d^2) per iteration plus
    O(d^3) per projection onto the PSD cone; memory O(d^2 + chunk x d), never
    n_pairs x d x d.
    """

    def __init__(self, max_iter=100, max_proj=10000, tol=1e-3, init="identity", diagonal=False,
                 diagonal_c=1.0, verbose=False, preprocessor=None, random_state=None,
                 convergence_threshold="deprecated", *, n_components=None, n_jobs=None):
        self.max_iter = max_iter
        self.max_proj = max_proj
        self.tol = tol
        self.init = init
        self.diagonal = diagonal
        self.diagonal_c = diagonal_c
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.convergence_threshold = convergence_threshold
        self.n_components = n_components
        self.n_jobs = n_jobs

    def fit(self, pairs, y=None, calibration_params=None, *, must_link=None, cannot_link=None):
        """Learn M from pairs, then calibrate ``threshold_`` on them.

        Two input forms:

        * ``fit(pairs, y)`` (metric-learn's): pairs of shape (n_pairs, 2, n_features), or
          (n_pairs, 2) indices with a preprocessor, and one label per pair, +1 for
          must-link and -1 for cannot-link;
        * ``fit(X, must_link=..., cannot_link=...)``: X of shape (n_samples, n_features)
          (or 1-D indices with a preprocessor) and two (n, 2) int arrays of row indices.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features) or (n_samples, n_features)
            The pairs, each as its two points; or, with ``must_link`` and ``cannot_link``,
            the points they index (at least 2 rows).
        y : array-like of shape (n_pairs,) or None, default=None
            With pairs: one label per pair, +1 (must-link) or -1 (cannot-link); both labels
            must occur. With index pairs it must be None.
        calibration_params : dict or None, default=None
            Passed to :meth:`calibrate_threshold` (default: the "accuracy" strategy).
        must_link : array-like of shape (n_must, 2) of int or None, default=None
            Keyword-only. Row indices into X of the pairs whose distance is minimised (the
            set S). At least one pair.
        cannot_link : array-like of shape (n_cannot, 2) of int or None, default=None
            Keyword-only. Row indices into X of the pairs whose summed distance is
            constrained to be at least 1 (the set D). At least one pair.

        Returns
        -------
        self
        """
        self._check_params()
        tol = renamed(self, "convergence_threshold", "tol")
        calibration = check_calibration_params(calibration_params)
        self.__dict__.pop("threshold_", None)  # a failed refit must not keep the old one
        self.preprocessor_ = resolve_preprocessor(self.preprocessor)
        if must_link is None and cannot_link is None:
            if input_ndim(pairs) == 2 and self.preprocessor_ is None:
                raise ValueError(
                    "MMC.fit takes pairs of shape (n_pairs, 2, n_features) with labels y, or "
                    "a 2-D X with must_link and cannot_link, (n, 2) arrays of row indices "
                    "into X. For class labels use MMC_Supervised."
                )
            self.__dict__.pop("feature_names_in_", None)
            formed = form_pairs(self.preprocessor_, pairs, estimator=self)
            X, must, cannot = labelled_pairs_to_indices(formed, y)
            check_distance_magnitude(X, "pairs")
        else:
            if input_ndim(pairs) == 3:
                raise ValueError(
                    "Pass either pairs of shape (n_pairs, 2, n_features) with labels y, or a "
                    "2-D X with must_link / cannot_link index pairs, not both."
                )
            if must_link is None or cannot_link is None:
                raise ValueError(
                    "MMC.fit needs both must_link and cannot_link, (n, 2) arrays of row "
                    "indices into X (or pairs of shape (n_pairs, 2, n_features) with labels "
                    "y). For class labels use MMC_Supervised."
                )
            if y is not None:
                raise ValueError(
                    "y is not used with must_link / cannot_link index pairs; pass y=None. "
                    "For class labels use MMC_Supervised."
                )
            record_feature_names(self, pairs)
            X = form_points(self.preprocessor_, pairs, min_samples=2)
            check_distance_magnitude(X)
            must = check_index_pairs(must_link, X.shape[0], "must_link")
            cannot = check_index_pairs(cannot_link, X.shape[0], "cannot_link")
        self._fit_pairs(X, must, cannot, check_random_state(self.random_state), tol)
        # the threshold from the training pairs, formed one kind at a time
        first = np.concatenate([must[0], cannot[0]])
        second = np.concatenate([must[1], cannot[1]])
        labels = np.concatenate([np.ones(must[0].shape[0]), -np.ones(cannot[0].shape[0])])
        self.calibrate_threshold(np.stack([X[first], X[second]], axis=1), labels, **calibration)
        return self


class MMC_Supervised(_BaseMMC):
    """MMC with must-link and cannot-link pairs drawn from class labels.

    Draws ``n_constraints`` must-link pairs (two points of one class) and as many
    cannot-link pairs (points of different classes), uniformly and reproducibly from
    ``random_state``, then solves :class:`MMC`'s problem. metric-learn's ``MMC_Supervised``:
    its parameters in its order, with its defaults (``tol=1e-6``).

    Parameters
    ----------
    max_iter : int, default=100
        As in :class:`MMC`.
    max_proj : int, default=10000
        As in :class:`MMC`.
    tol : float, default=1e-6
        As in :class:`MMC` (metric-learn's default here is tighter than MMC's).
    n_constraints : int or None, default=None
        Pairs of each kind; None is ``20 n^2``, n the distinct labels in y (an unlabelled
        value counts, as in metric-learn).
    init : {"identity", "covariance", "random"} or ndarray of shape (d, d), \
default="identity"
        As in :class:`MMC`.
    diagonal : bool, default=False
        As in :class:`MMC`.
    diagonal_c : float, default=1.0
        As in :class:`MMC`.
    verbose : bool or int, default=False
        As in :class:`MMC`.
    preprocessor : array-like, callable or None, default=None
        With a preprocessor, X may be a 1-D array of indices into it.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the draw of pairs (and ``init="random"``).
    num_constraints : int or "deprecated", default="deprecated"
        metric-learn's old name of ``n_constraints`` (FutureWarning).
    convergence_threshold : float or "deprecated", default="deprecated"
        metric-learn's old name of ``tol`` (FutureWarning).
    n_components, n_jobs
        Keyword-only, as in :class:`MMC`.

    Attributes
    ----------
    components_, objective_, constraint_, n_iter_, converged_, n_features_in_
        As in :class:`MMC`.
    classes_ : ndarray of shape (n_classes,)
        The labelled classes (a negative numeric label means unlabelled, as in metric-learn).
    must_link_, cannot_link_ : ndarray of shape (n_constraints, 2)
        The drawn pairs (row indices into the X passed to ``fit``).
    preprocessor_ : None, callable or ndarray
    """

    _parameter_constraints = {
        **_BaseMMC._parameter_constraints,
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "num_constraints": [DEPRECATED, Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, max_iter=100, max_proj=10000, tol=1e-6, n_constraints=None,
                 init="identity", diagonal=False, diagonal_c=1.0, verbose=False,
                 preprocessor=None, random_state=None, num_constraints="deprecated",
                 convergence_threshold="deprecated", *, n_components=None, n_jobs=None):
        self.max_iter = max_iter
        self.max_proj = max_proj
        self.tol = tol
        self.n_constraints = n_constraints
        self.init = init
        self.diagonal = diagonal
        self.diagonal_c = diagonal_c
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.num_constraints = num_constraints
        self.convergence_threshold = convergence_threshold
        self.n_components = n_components
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Draw pairs from the class labels and learn M.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples,) of int with a
            preprocessor.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes; negative numeric labels mean unlabelled).

        Returns
        -------
        self
        """
        self._check_params()
        tol = renamed(self, "convergence_threshold", "tol")
        n_constraints = renamed(self, "num_constraints", "n_constraints")
        X = fit_points(self, X)
        rng = check_random_state(self.random_state)
        self.classes_, self.must_link_, self.cannot_link_ = supervised_pairs(
            y, X.shape[0], "MMC_Supervised", "cannot-link", n_constraints, rng)
        must = tuple(np.ascontiguousarray(c) for c in self.must_link_.T)
        cannot = tuple(np.ascontiguousarray(c) for c in self.cannot_link_.T)
        return self._fit_pairs(X, must, cannot, rng, tol)
