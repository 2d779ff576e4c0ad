"""metric-learn's NCA: its parameters and starts, on fastdr's compiled NCA objective."""

import time
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.optimize

from .._base import BaseEstimator
from .._runtime.blas import single_threaded_blas
from .._runtime.progress import IterationLog
from .._validation.params import N_JOBS, Interval, validate_params
from ..exceptions import ConvergenceWarning, compatible
from ._base import (
    METRIC_LEARN_N_COMPONENTS,
    MahalanobisMixin,
    check_labelled_data,
    metric_learn_n_components,
)
from ._nca import nca_objective_gradient
from ._nca_init import check_init_name, metric_learn_start
from ._tuples import fit_points


class NCA(MahalanobisMixin, BaseEstimator):
    """Neighbourhood components analysis with metric-learn 0.7's interface.

    The objective of :class:`fastdr.NeighborhoodComponentsAnalysis` (the expected number of
    points whose stochastic nearest neighbour shares their class, softmax over
    ``-|L x_i - L x_j|^2``), maximised by scipy's L-BFGS-B as metric-learn does, from
    metric-learn's starts. The objective and its gradient come from fastdr's compiled kernel:
    never an m x m matrix, the same result for any ``n_jobs``.

    Parameters
    ----------
    init : {"auto", "pca", "lda", "identity", "random"} or ndarray of shape \
(n_components, n_features), default="auto"
        The starting map. "auto" is "lda" when ``n_components <= min(n_features,
        n_classes - 1)``, else "pca" when ``n_components < min(n_features, n_samples)``,
        else "identity".
    n_components : int or None, default=None
        Rows of the learned map (None: n_features).
    max_iter : int, default=100
        L-BFGS-B iterations at most.
    tol : float or None, default=None
        scipy's ``tol`` for L-BFGS-B (None: scipy's defaults).
    verbose : bool, default=False
        Print one line per objective evaluation and the training time (metric-learn's
        table), and warn when L-BFGS-B stops short.
    preprocessor : array-like, callable or None, default=None
        With a preprocessor, X may be a 1-D array of indices into it.
    random_state : int, RandomState instance or None, default=None
        Seeds the "random" start and the "pca" start's solver.
    n_jobs : int or None, default=None
        Keyword-only. Threads of the objective kernel (None: all cores).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned map L (``M = L^T L``).
    n_iter_ : int
        L-BFGS-B iterations run.
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    See Also
    --------
    fastdr.NeighborhoodComponentsAnalysis : The same objective with scikit-learn's interface.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from fastdr.metric_learning import NCA
    >>> X, y = load_iris(return_X_y=True)
    >>> NCA(n_components=2, random_state=0).fit(X, y).transform(X).shape
    (150, 2)
    """

    _parameter_constraints = {
        # metric-learn's words for a bad init (check_init_name, in fit)
        "init": "no_validation",
        "n_components": METRIC_LEARN_N_COMPONENTS,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "verbose": ["boolean", Interval(Integral, 0, None, closed="left")],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS,
    }

    def __init__(self, init="auto", n_components=None, max_iter=100, tol=None, verbose=False,
                 preprocessor=None, random_state=None, *, n_jobs=None):
        self.init = init
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _fastdr_tags(self):
        return {"target_tags.required": True}

    def fit(self, X, y):
        """Learn the map from labelled points.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples,) of int with a
            preprocessor.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self
        """
        validate_params(self)
        check_init_name(self.init, ["auto", "pca", "identity", "random", "lda"], self)
        X, _, codes = check_labelled_data(fit_points(self, X), y, "NCA", min_classes=1)
        m, d = X.shape
        r = metric_learn_n_components(self.n_components, d, "NCA")
        codes = np.asarray(codes, dtype=np.int64)
        started = time.time()
        A0 = metric_learn_start(self.init, X, codes, r, self.random_state, self.verbose)
        # the objective does not depend on the order of the points; grouped by class, a
        # block's softmax candidates sit together in memory
        order = np.argsort(codes, kind="stable")
        X = np.ascontiguousarray(X[order], dtype=np.float64)
        codes = np.ascontiguousarray(codes[order])
        name = type(self).__name__
        log = IterationLog(name, self.max_iter, self.verbose)
        if self.verbose:
            print(f"[{name}]")
        evaluations = [0]

        def negative_objective(a_flat):
            objective, gradient = nca_objective_gradient(X, a_flat.reshape(r, d), codes,
                                                         n_jobs=self.n_jobs)
            # metric-learn numbers its lines by evaluation, from 0
            log.iteration(evaluations[0], objective)
            evaluations[0] += 1
            return -objective, -gradient.ravel()

        # between kernel calls L-BFGS-B does O(r d) work: BLAS threads there would only spin
        with single_threaded_blas():
            result = scipy.optimize.minimize(negative_objective, A0.ravel(), method="L-BFGS-B",
                                             jac=True, tol=self.tol,
                                             options={"maxiter": self.max_iter})
        if self.verbose and not result.success:
            warnings.warn(f"[{name}] NCA did not converge: {result.message}",
                          compatible(ConvergenceWarning), stacklevel=2)
        log.close(f"Training took {time.time() - started:8.2f}s.")
        self.components_ = np.ascontiguousarray(result.x.reshape(r, d))
        self.n_iter_ = int(result.nit)
        self.n_features_in_ = d
        return self
