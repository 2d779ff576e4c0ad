"""``ITML`` and ``ITML_Supervised``: information-theoretic metric learning (Davis et al.,
2007), metric-learn's interface, with the Bregman projections in a compiled sweep."""

import warnings
from numbers import Integral, Real

import numpy as np

from .._base import BaseEstimator
from .._kernels.learners.itml import itml_sweep
from .._validation.arrays import check_array
from .._validation.magnitudes import check_distance_magnitude
from .._validation.params import (
    Interval,
    Satisfies,
    StrOptions,
    check_random_state,
    validate_params,
)
from ._base import DEPRECATED, MahalanobisMixin, components_from_metric, renamed
from ._constraints import (
    check_pair_labels,
    stack_pairs,
    supervised_pairs,
)
from ._pairs_classifier import PairsClassifierMixin, check_calibration_params
from ._prior import prior_metric
from ._tuples import check_spread, fit_points, form_pairs, resolve_preprocessor

#: above this many distinct points, the default bounds come from a sample of this many
BOUNDS_SAMPLE = 4096


def default_bounds(points, rng):
    """metric-learn's default bounds: the 5th and 95th percentiles of all pairwise distances
    among the distinct points (the full matrix, its zero diagonal included).

    Above ``BOUNDS_SAMPLE`` distinct points, the percentiles of a random sample of that many
    (never an m x m matrix of the whole data).
    """
    from scipy.spatial.distance import pdist

    X = np.unique(points, axis=0)
    if X.shape[0] > BOUNDS_SAMPLE:
        X = X[np.sort(rng.permutation(X.shape[0])[:BOUNDS_SAMPLE])]
    d = pdist(X)
    # each distance twice and m zeros: the multiset of the full symmetric matrix
    return np.percentile(np.concatenate([d, d, np.zeros(X.shape[0])]), (5, 95))


def _check_bounds(bounds):
    b = check_array(bounds, name="bounds", ensure_2d=False, dtype=np.float64).ravel()
    if b.size != 2:
        raise ValueError("`bounds` should be an array-like of two elements.")
    if (b < 0).any():
        raise ValueError(f"bounds are distances and must be >= 0; got {b.tolist()}.")
    return b


class _BaseITML(MahalanobisMixin, BaseEstimator):
    _parameter_constraints = {
        "gamma": [Satisfies(lambda v: isinstance(v, Real) and not isinstance(v, bool) and v > 0,
                            "a float > 0 (np.inf for hard bounds)")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "prior": [StrOptions({"identity", "covariance", "random"}), np.ndarray],
        "verbose": ["boolean", Interval(Integral, 0, None, closed="left")],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
        "convergence_threshold": [DEPRECATED, Interval(Real, 0, None, closed="left")],
    }

    def _fastdr_tags(self):
        return {"target_tags.required": True}

    def _fit_pairs(self, pairs, y, bounds, rng):
        """Learn A from formed pairs (n, 2, d) with labels +1 / -1."""
        check_distance_magnitude(pairs.reshape(-1, pairs.shape[2]), "pairs")
        check_spread(pairs.reshape(-1, pairs.shape[2]), "pairs")
        tol = renamed(self, "convergence_threshold", "tol")
        points = pairs.reshape(-1, pairs.shape[2])
        self.bounds_ = (default_bounds(points, rng) if bounds is None
                        else np.array(_check_bounds(bounds), copy=True))
        self.bounds_[self.bounds_ == 0] = 1e-9
        d = pairs.shape[2]
        A = np.ascontiguousarray(prior_metric(self.prior, points, d, rng))
        similar = y == 1
        # identical points, or points so close that their squared distance underflows
        gap = pairs[:, 0] - pairs[:, 1]
        zero = np.einsum("ij,ij->i", gap, gap) == 0
        if (zero & ~similar).any():
            # no metric separates a point from itself: the projection would divide by 0
            warnings.warn(f"{int(np.sum(zero & ~similar))} dissimilar pair(s) join identical "
                          "points, which no metric can push apart; ITML leaves them out.",
                          UserWarning, stacklevel=3)
        # a similar pair of identical points meets its bound in any metric: its projection
        # is a no-op (alpha = min(0, +inf) = 0 in metric-learn), so it is left out silently
        order = np.concatenate([np.flatnonzero(similar & ~zero),
                                np.flatnonzero(~similar & ~zero)])
        diffs = np.ascontiguousarray(pairs[order, 0] - pairs[order, 1], dtype=np.float64)
        delta = np.where(similar[order], 1.0, -1.0)
        targets = np.where(similar[order], self.bounds_[0], self.bounds_[1]).astype(np.float64)
        gamma = float(self.gamma)
        gamma_proj = 1.0 if np.isinf(gamma) else gamma / (gamma + 1.0)
        lambdas = np.zeros(diffs.shape[0])
        previous = np.zeros_like(lambdas)
        scratch = np.empty(d)
        conv = np.inf
        for it in range(self.max_iter):
            bad = itml_sweep(A, diffs, delta, targets, lambdas, gamma, gamma_proj, scratch)
            if bad >= 0:
                raise ValueError(
                    f"ITML's squared distance of pair {int(order[bad])} left the float64 range "
                    f"in sweep {it} (the metric grew or shrank past it). Rescale X (for "
                    "example with StandardScaler), or pass bounds of the data's own scale."
                )
            norms = np.linalg.norm(lambdas) + np.linalg.norm(previous)
            if norms == 0:
                conv = np.inf
                break
            conv = np.abs(previous - lambdas).sum() / norms
            if conv < tol:
                break
            previous = lambdas.copy()
            if self.verbose:
                print(f"itml iter: {it}, conv = {conv:f}")
        if self.verbose:
            print(f"itml converged at iter: {it}, conv = {conv:f}")
        values = np.linalg.eigvalsh(A) if np.isfinite(A).all() else np.array([np.nan])
        if not values.min() > 0:
            raise ValueError("ITML's metric left the positive definite matrices in float64 (its "
                             "updates lost their digits); rescale X, for example with "
                             "StandardScaler.")
        self.n_iter_ = it
        self.components_ = components_from_metric(A)
        self.n_features_in_ = d
        return self


class ITML(PairsClassifierMixin, _BaseITML):
    """Information-theoretic metric learning from labelled pairs.

    The Mahalanobis matrix closest to a prior in LogDet divergence such that similar pairs are
    within an upper bound and dissimilar pairs beyond a lower bound (with slack weighted by
    ``gamma``), by cyclic Bregman projections, one pair at a time.

    Parameters
    ----------
    gamma : float, default=1.0
        Slack trade-off; larger enforces the bounds harder (``np.inf``: hard bounds).
    max_iter : int, default=1000
        Sweeps over the pairs.
    tol : float, default=1e-3
        Stop when the relative change of the dual variables falls below it.
    prior : {"identity", "covariance", "random"} or ndarray of shape (d, d), \
default="identity"
        The starting (and regularising) metric; strictly positive definite.
    verbose : bool, default=False
    preprocessor : array-like, callable or None, default=None
        With a preprocessor, pairs may be (n_pairs, 2) indices.
    random_state : int, RandomState instance or None, default=None
        For ``prior="random"`` and the sample behind the default bounds on large data.
    convergence_threshold : float or "deprecated", default="deprecated"
        metric-learn's old name of ``tol`` (FutureWarning).

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
    bounds_ : ndarray of shape (2,)
        The upper bound for similar pairs and the lower bound for dissimilar pairs.
    threshold_ : float
        The distance below which ``predict`` says similar.
    n_iter_ : int
        The index of the last sweep (metric-learn's count).
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int

    References
    ----------
    J. V. Davis, B. Kulis, P. Jain, S. Sra and I. S. Dhillon, "Information-theoretic metric
    learning", ICML 2007.
    """

    def __init__(self, gamma=1.0, max_iter=1000, tol=1e-3, prior="identity", verbose=False,
                 preprocessor=None, random_state=None, convergence_threshold="deprecated"):
        self.gamma = gamma
        self.max_iter = max_iter
        self.tol = tol
        self.prior = prior
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.convergence_threshold = convergence_threshold

    def fit(self, pairs, y, bounds=None, calibration_params=None):
        """Learn the metric from labelled pairs, then calibrate ``threshold_`` on them.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2) of int with
            a preprocessor.
        y : array-like of shape (n_pairs,)
            +1 for a similar pair, -1 for a dissimilar one.
        bounds : array-like of two floats or None, default=None
            The upper bound for similar pairs and the lower bound for dissimilar ones; None
            takes the 5th and 95th percentiles of the pairwise distances of the points.
        calibration_params : dict or None, default=None
            Passed to :meth:`calibrate_threshold` (default: the "accuracy" strategy).

        Returns
        -------
        self
        """
        validate_params(self)
        calibration = check_calibration_params(calibration_params)
        self.__dict__.pop("threshold_", None)  # a failed refit must not keep the old one
        self.preprocessor_ = resolve_preprocessor(self.preprocessor)
        formed = form_pairs(self.preprocessor_, pairs, estimator=self)
        labels = check_pair_labels(y, formed.shape[0])
        self._fit_pairs(formed, labels, bounds, check_random_state(self.random_state))
        self.calibrate_threshold(formed, labels, **calibration)
        return self


class ITML_Supervised(_BaseITML):
    """ITML with similar and dissimilar pairs drawn from class labels.

    Parameters
    ----------
    gamma : float, default=1.0
        As in :class:`ITML`.
    max_iter : int, default=1000
        As in :class:`ITML`.
    tol : float, default=1e-3
        As in :class:`ITML`.
    n_constraints : int or None, default=None
        Pairs of each kind to draw; None is ``20 n^2``, n the distinct labels in y (an
        unlabelled value counts, as in metric-learn).
    prior : {"identity", "covariance", "random"} or ndarray, default="identity"
        As in :class:`ITML`.
    verbose : bool, default=False
    preprocessor : array-like, callable or None, default=None
        With a preprocessor, X may be a 1-D array of indices into it.
    random_state : int, RandomState instance or None, default=None
        Seeds the draw of the pairs (and ``prior="random"``).
    num_constraints : int or "deprecated", default="deprecated"
        metric-learn's old name of ``n_constraints`` (FutureWarning).
    convergence_threshold : float or "deprecated", default="deprecated"
        metric-learn's old name of ``tol`` (FutureWarning).

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
    bounds_ : ndarray of shape (2,)
    n_iter_ : int
    must_link_, cannot_link_ : ndarray of shape (n_constraints, 2)
        The drawn row-index pairs.
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from fastdr.metric_learning import ITML_Supervised
    >>> X, y = load_iris(return_X_y=True)
    >>> ITML_Supervised(random_state=0).fit(X, y).transform(X).shape
    (150, 4)
    """

    _parameter_constraints = {
        **_BaseITML._parameter_constraints,
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "num_constraints": [DEPRECATED, Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, gamma=1.0, max_iter=1000, tol=1e-3, n_constraints=None,
                 prior="identity", verbose=False, preprocessor=None, random_state=None,
                 num_constraints="deprecated", convergence_threshold="deprecated"):
        self.gamma = gamma
        self.max_iter = max_iter
        self.tol = tol
        self.n_constraints = n_constraints
        self.prior = prior
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.num_constraints = num_constraints
        self.convergence_threshold = convergence_threshold

    def fit(self, X, y, bounds=None):
        """Draw pairs from the class labels and learn the metric.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples,) of int with a
            preprocessor.
        y : array-like of shape (n_samples,)
            Class labels (two classes or more).
        bounds : array-like of two floats or None, default=None
            As in :meth:`ITML.fit`.

        Returns
        -------
        self
        """
        validate_params(self)
        n_constraints = renamed(self, "num_constraints", "n_constraints")
        X = fit_points(self, X)
        rng = check_random_state(self.random_state)
        _, self.must_link_, self.cannot_link_ = supervised_pairs(
            y, X.shape[0], "ITML_Supervised", "dissimilar", n_constraints, rng)
        pairs, labels = stack_pairs(X, self.must_link_, self.cannot_link_)
        return self._fit_pairs(pairs, labels, bounds, rng)
