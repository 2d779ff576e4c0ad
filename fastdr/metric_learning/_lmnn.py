"""``LMNN``: large-margin nearest neighbour metric learning (Weinberger and Saul), with
metric-learn's interface and its optimiser, on a compiled impostor search.

The loss at a map L is ``reg * sum_(a,t) |L(x_a - x_t)|^2 + (1 - reg) * sum_(a,t,b)
[1 + |L(x_a - x_t)|^2 - |L(x_a - x_b)|^2]_+`` over each point a, its k target neighbours t
(the nearest points of its class in the input space) and the points b of other classes.
The impostor search and the gradient are in :mod:`._lmnn_loss`: memory O(block m + m d),
never m x m nor m x k x d.
"""

import sys
from numbers import Integral, Real

import numpy as np

from .._base import BaseEstimator
from .._validation.params import (
    N_JOBS,
    Interval,
    validate_params,
)
from ..neighbors._search import knn_brute
from ._base import (
    DEPRECATED,
    METRIC_LEARN_N_COMPONENTS,
    MahalanobisMixin,
    check_labelled_data,
    metric_learn_n_components,
    renamed,
)
from ._lmnn_loss import LMNNLoss
from ._nca_init import check_init_name, metric_learn_start
from ._tuples import fit_points


def target_neighbours(X, codes, k, n_jobs=None):
    """Each point's k nearest other points of its class (Euclidean, ties by index).

    Parameters
    ----------
    X : ndarray of shape (m, d), float64
    codes : ndarray of shape (m,), int64
    k : int
        At most the smallest class's size minus one.
    n_jobs : int or None

    Returns
    -------
    ndarray of shape (m, k), int64
    """
    targets = np.empty((X.shape[0], k), dtype=np.int64)
    for c in range(int(codes.max()) + 1):
        rows = np.flatnonzero(codes == c)
        Xc = np.ascontiguousarray(X[rows])
        _, idx = knn_brute(Xc, Xc, k, self_query=True, n_jobs=n_jobs)
        targets[rows] = rows[idx]
    return targets


class LMNN(MahalanobisMixin, BaseEstimator):
    """Large-margin nearest neighbour metric learning (Weinberger and Saul).

    Pulls each point's k target neighbours (the nearest points of its class) close and pushes
    points of other classes out of the margin they define, by metric-learn's gradient descent
    on L (a step halved until the loss decreases, then grown by 1%, stopped after ``min_iter``
    iterations when the loss changes by less than ``convergence_tol``), so that the same
    parameters give metric-learn's map. Each step's impostor search is compiled and parallel
    over blocks of points, and holds nothing m x m.

    Parameters
    ----------
    init : {"auto", "pca", "lda", "identity", "random"} or ndarray of shape (n_components, \
n_features), default="auto"
        The starting map. "auto" is "lda" when n_components <= min(n_features, n_classes - 1),
        "pca" when n_components < min(n_features, n_samples), else "identity".
    n_neighbors : int, default=3
        Target neighbours per point (itself excluded); every class needs more points than this.
    min_iter : int, default=50
        Iterations before the convergence test applies.
    max_iter : int, default=1000
        Iteration limit (metric-learn's count: the loop runs to ``max_iter - 1``).
    learn_rate : float, default=1e-7
        The first step size.
    regularization : float, default=0.5
        The pull term's weight; the push term's is ``1 - regularization``.
    convergence_tol : float, default=0.001
        Stop when the loss changes by less than this (after ``min_iter``).
    verbose : bool, default=False
        Print metric-learn's per-iteration table.
    preprocessor : array-like, callable or None, default=None
        With a preprocessor, X may be a 1-D array of indices into it.
    n_components : int or None, default=None
        Rows of the map; None keeps n_features.
    random_state : int, RandomState instance or None, default=None
        Seeds the "random" start and the "pca" start's solver.
    k : int or "deprecated", default="deprecated"
        metric-learn's old name of ``n_neighbors``: a value other than "deprecated" replaces
        it, with a ``FutureWarning``.
    n_jobs : int or None, default=None
        Threads for the impostor search (fastdr's extra; the result does not depend on it).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned map L.
    n_iter_ : int
        metric-learn's iteration count.
    labels_ : ndarray of shape (n_classes,)
        ``arange(n_classes)``, as metric-learn.
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    References
    ----------
    K. Q. Weinberger and L. K. Saul, "Distance metric learning for large margin nearest
    neighbor classification", JMLR 10, 2009.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from fastdr.metric_learning import LMNN
    >>> X, y = load_iris(return_X_y=True)
    >>> LMNN(n_neighbors=5, learn_rate=1e-6).fit(X, y).components_.shape
    (4, 4)
    """

    _parameter_constraints = {
        # metric-learn's words for a bad init (check_init_name, in fit)
        "init": "no_validation",
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "min_iter": [Interval(Integral, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "learn_rate": [Interval(Real, 0, None, closed="neither")],
        "regularization": [Interval(Real, 0, 1, closed="both")],
        "convergence_tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["boolean", Interval(Integral, 0, None, closed="left")],
        "preprocessor": ["array-like", callable, None],
        "n_components": METRIC_LEARN_N_COMPONENTS,
        "random_state": ["random_state"],
        "k": [DEPRECATED, Interval(Integral, 1, None, closed="left")],
        "n_jobs": N_JOBS,
    }

    def __init__(self, init="auto", n_neighbors=3, min_iter=50, max_iter=1000,
                 learn_rate=1e-7, regularization=0.5, convergence_tol=0.001, verbose=False,
                 preprocessor=None, n_components=None, random_state=None, k="deprecated", *,
                 n_jobs=None):
        self.init = init
        self.n_neighbors = n_neighbors
        self.min_iter = min_iter
        self.max_iter = max_iter
        self.learn_rate = learn_rate
        self.regularization = regularization
        self.convergence_tol = convergence_tol
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.n_components = n_components
        self.random_state = random_state
        self.k = k
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Learn the map from labelled points.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples,) of int with a
            preprocessor.
        y : array-like of shape (n_samples,)
            Class labels: two classes or more, each with more than ``n_neighbors`` points.

        Returns
        -------
        self
        """
        validate_params(self)
        check_init_name(self.init, ["auto", "pca", "identity", "random", "lda"], self)
        k = renamed(self, "k", "n_neighbors")
        X, _, codes = check_labelled_data(fit_points(self, X), y, "LMNN",
                                          needs=" (impostors are points of other classes)")
        m, d = X.shape
        smallest = int(np.bincount(codes).min())
        if k > smallest - 1:
            raise ValueError(
                f"not enough class labels for specified k (smallest class has {smallest}): "
                f"n_neighbors={k} target neighbours need {k + 1} points in every class (a "
                f"point is not its own neighbour). Lower n_neighbors to at most "
                f"{smallest - 1}, or drop or merge the small classes."
            )
        r = metric_learn_n_components(self.n_components, d, "LMNN")
        X = np.asarray(X, dtype=np.float64)
        L = metric_learn_start(self.init, X, codes, r, self.random_state, self.verbose)
        # the loss depends only on differences of points: centring costs nothing and keeps
        # the Laplacian form of the gradient free of cancellation
        X = np.ascontiguousarray(X - X.mean(axis=0))
        targets = target_neighbours(X, codes, k, self.n_jobs)
        evaluate = LMNNLoss(X, codes, targets, self.regularization, self.n_jobs)
        with np.errstate(over="ignore", invalid="ignore"):
            G, loss, active = evaluate(L)
        if not (np.isfinite(loss) and np.isfinite(G).all()):
            raise ValueError(
                "LMNN's loss at the start map is outside the float64 range: its margin of 1 "
                "makes LMNN depend on the scale of X, and squared distances in X overflow. "
                "Scale X (for instance with StandardScaler) or pass a smaller init.")
        learn_rate = float(self.learn_rate)
        it = 1
        if self.verbose:
            print("iter | objective | objective difference | active constraints",
                  "| learning rate")
        for it in range(2, self.max_iter):
            while True:
                with np.errstate(over="ignore", invalid="ignore"):
                    L_next = L - learn_rate * G
                if np.isfinite(L_next).all():
                    with np.errstate(over="ignore", invalid="ignore"):
                        G_next, loss_next, active_next = evaluate(L_next)
                if not (np.isfinite(L_next).all() and np.isfinite(loss_next)):
                    raise ValueError(
                        f"LMNN's loss left the float64 range at iteration {it} (learn_rate="
                        f"{learn_rate:g}): its margin of 1 makes LMNN depend on the scale of "
                        f"X. Scale X down (for instance with StandardScaler) or lower "
                        f"learn_rate.")
                delta = loss_next - loss
                if delta <= 0 or learn_rate == 0.0:
                    break
                learn_rate /= 2.0
            L, G, loss, active = L_next, G_next, loss_next, active_next
            learn_rate *= 1.01
            if self.verbose:
                print(it, loss, delta, active, learn_rate)
                sys.stdout.flush()
            if it > self.min_iter and abs(delta) < self.convergence_tol:
                if self.verbose:
                    print("LMNN converged with objective", loss)
                break
        else:
            if self.verbose:
                print(f"LMNN didn't converge in {self.max_iter} steps.")
        self.components_ = np.ascontiguousarray(L)
        self.n_iter_ = it
        self.labels_ = np.arange(int(codes.max()) + 1)
        self.n_features_in_ = d
        return self
