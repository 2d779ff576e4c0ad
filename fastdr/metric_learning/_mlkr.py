"""``MLKR``: metric learning for kernel regression (Weinberger and Tesauro, 2007), with
metric-learn's interface, on the compiled softmax-neighbour kernel NCA uses."""

import sys
import time
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.optimize import minimize

from .._base import BaseEstimator
from .._kernels.learners import nca as softmax_kernels
from .._runtime.threads import parallel_section
from .._validation.arrays import check_X_y
from .._validation.params import (
    N_JOBS,
    Interval,
    check_random_state,
    validate_params,
)
from ..exceptions import ConvergenceWarning
from ._base import METRIC_LEARN_N_COMPONENTS, MahalanobisMixin, metric_learn_n_components
from ._nca import row_partition
from ._nca_init import check_init_array, check_init_name, pca_start
from ._tuples import fit_points


def mlkr_loss_gradient(X, A, y, *, n_jobs=None):
    """MLKR's loss ``sum_i (yhat_i - y_i)^2`` and its gradient with respect to A.

    ``yhat_i = sum_{j != i} p_ij y_j``, ``p_ij`` the softmax of ``-|A x_i - A x_j|^2`` over
    j. Compiled, over fixed chunks of row blocks (the same result for any ``n_jobs``);
    nothing m x m is held. Time O(m^2 r + candidates d + m d^2).

    Parameters
    ----------
    X : ndarray of shape (m, d), float64, C-contiguous
    A : ndarray of shape (r, d)
    y : ndarray of shape (m,), float64
    n_jobs : int or None

    Returns
    -------
    loss : float
    gradient : ndarray of shape (r, d)
    """
    m = X.shape[0]
    rows = np.arange(m, dtype=np.int64)
    block, n_chunks = row_partition(m, m)
    A = np.ascontiguousarray(A, dtype=np.float64)
    with parallel_section(n_jobs):
        loss, gradient = softmax_kernels.mlkr_objective_gradient(X, A, y, rows, block, n_chunks)
    return float(loss), gradient


class MLKR(MahalanobisMixin, BaseEstimator):
    """Metric learning for kernel regression: the map that best predicts y by its neighbours.

    Minimises the leave-one-out error ``sum_i (yhat_i - y_i)^2`` of the Gaussian-kernel
    regression ``yhat_i = sum_{j != i} p_ij y_j``, ``p_ij`` proportional to
    ``exp(-|A x_i - A x_j|^2)``, over the map A, by L-BFGS-B (as metric-learn). The loss and
    its gradient come from one compiled pass over blocks of rows that keeps, per row, only
    the points whose kernel weight is above round-off: memory O(block m), never m x m.

    Parameters
    ----------
    n_components : int or None, default=None
        Rows of the map; None keeps n_features.
    init : {"auto", "pca", "identity", "random"} or ndarray of shape (n_components, \
n_features), default="auto"
        The starting map. "auto" is "pca" when n_components < min(n_features, n_samples),
        else "identity" (metric-learn's rule without classes).
    tol : float or None, default=None
        L-BFGS-B's tolerance (scipy's ``minimize(tol=...)``).
    max_iter : int, default=1000
        L-BFGS-B's iteration limit.
    verbose : bool, default=False
        Print metric-learn's per-evaluation lines and warn ``ConvergenceWarning`` when
        L-BFGS-B stops short.
    preprocessor : array-like, callable or None, default=None
        With a preprocessor, X may be a 1-D array of indices into it.
    random_state : int, RandomState instance or None, default=None
        Seeds the "random" start and the "pca" start's solver.
    n_jobs : int or None, default=None
        Threads for each loss evaluation (fastdr's extra; the result does not depend on it).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned map A.
    n_iter_ : int
        Loss evaluations (metric-learn's count).
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    References
    ----------
    K. Q. Weinberger and G. Tesauro, "Metric learning for kernel regression", AISTATS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from fastdr.metric_learning import MLKR
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 4))
    >>> y = X[:, 0] + 0.1 * rng.standard_normal(200)
    >>> MLKR(n_components=1, random_state=0).fit(X, y).components_.shape
    (1, 4)
    """

    _parameter_constraints = {
        "n_components": METRIC_LEARN_N_COMPONENTS,
        # metric-learn's words for a bad init (check_init_name, in fit)
        "init": "no_validation",
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "verbose": ["boolean", Interval(Integral, 0, None, closed="left")],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS,
    }

    def __init__(self, n_components=None, init="auto", tol=None, max_iter=1000,
                 verbose=False, preprocessor=None, random_state=None, *, n_jobs=None):
        self.n_components = n_components
        self.init = init
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _fastdr_tags(self):
        # fit needs y (real targets), as metric-learn's learner does
        return {"target_tags.required": True}

    def fit(self, X, y):
        """Learn the map from points and real targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples,) of int with a
            preprocessor. At least 2 rows.
        y : array-like of shape (n_samples,)
            Real-valued targets.

        Returns
        -------
        self
        """
        validate_params(self)
        check_init_name(self.init, ["auto", "pca", "identity", "random"], self)
        X, y = check_X_y(fit_points(self, X), y, min_samples=2, y_numeric=True)
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        n, d = X.shape
        r = metric_learn_n_components(self.n_components, d, "MLKR")
        A = self._start(X, r)
        self.n_iter_ = 0
        started = time.time()
        if self.verbose:
            header = f"{'Iteration':>10} {'Objective Value':>20} {'Time(s)':>10}"
            print(f"[MLKR]\n[MLKR] {header}\n[MLKR] {'-' * len(header)}")

        def loss(flat):
            tick = time.time()
            value, gradient = mlkr_loss_gradient(X, flat.reshape(A.shape), y,
                                                 n_jobs=self.n_jobs)
            if self.verbose:
                print(f"[MLKR] {self.n_iter_:>10} {value:>20.6e} {time.time() - tick:>10.2f}")
                sys.stdout.flush()
            self.n_iter_ += 1
            return value, gradient.ravel()

        result = minimize(loss, A.ravel(), method="L-BFGS-B", jac=True, tol=self.tol,
                          options={"maxiter": self.max_iter})
        if not np.isfinite(result.x).all():
            raise ValueError("MLKR's map left the float64 range (a start or data too large "
                             "for exp(-|A x_i - A x_j|^2)); rescale X or the init.")
        self.components_ = np.ascontiguousarray(result.x.reshape(A.shape))
        self.n_features_in_ = d
        if self.verbose:
            if not result.success:
                warnings.warn(f"[MLKR] MLKR did not converge: {result.message}",
                              ConvergenceWarning, stacklevel=2)
            print(f"[MLKR] Training took {time.time() - started:8.2f}s.")
        return self

    def _start(self, X, r):
        n, d = X.shape
        init = self.init
        if isinstance(init, np.ndarray):
            return check_init_array(init, d, self.n_components)
        if init == "auto":
            init = "pca" if r < min(d, n) else "identity"
        if init == "identity":
            return np.eye(r, d)
        if init == "random":
            rng = check_random_state(self.random_state)
            return np.asarray(rng.standard_normal((r, d)), dtype=np.float64)
        return pca_start(X, r, self.random_state)
