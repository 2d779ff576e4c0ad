"""SDML, sparse determinant metric learning (Qi, Tang, Zha, Chua and Zhang, 2009)."""

import warnings
from numbers import Integral, Real

import numpy as np

from .._base import BaseEstimator
from .._validation.magnitudes import check_distance_magnitude
from .._validation.params import Interval, StrOptions, check_random_state, validate_params
from ..exceptions import ConvergenceWarning, compatible
from ._base import DEPRECATED, MahalanobisMixin, components_from_metric, renamed
from ._constraints import (
    check_pair_labels,
    stack_pairs,
    supervised_pairs,
)
from ._pairs_classifier import PairsClassifierMixin, check_calibration_params
from ._prior import prior_metric
from ._tuples import check_spread, fit_points, form_pairs, resolve_preprocessor


def signed_scatter(pairs, y):
    """``sum_k y_k v_k v_k^T`` over pairs, ``v_k`` the difference of pair k's two points.

    One BLAS product over the (n_pairs, d) differences: O(n_pairs d^2) time, O(n_pairs d)
    memory (the pairs themselves are that size).
    """
    diff = pairs[:, 0] - pairs[:, 1]
    return (diff.T * y) @ diff


class _BaseSDML(MahalanobisMixin, BaseEstimator):
    _parameter_constraints = {
        "balance_param": [Interval(Real, None, None, closed="neither")],
        "sparsity_param": [Interval(Real, 0, None, closed="left")],
        "prior": [StrOptions({"identity", "covariance", "random"}), np.ndarray],
        "verbose": ["boolean", Interval(Integral, 0, None, closed="left")],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
    }

    def _fastdr_tags(self):
        return {"target_tags.required": True}

    def _fit_pairs(self, pairs, y, rng):
        """Learn M from formed pairs (n, 2, d) with labels +1 / -1."""
        from sklearn.covariance import graphical_lasso

        points = pairs.reshape(-1, pairs.shape[2])
        check_distance_magnitude(points, "pairs")
        check_spread(points, "pairs")
        d = pairs.shape[2]
        if d < 2:
            raise ValueError(f"Cannot fit SDML with {d} feature(s): the graphical lasso needs "
                             "two or more.")
        if self.verbose:
            print("SDML will use scikit-learn's graphical lasso solver.")
        prior = prior_metric(self.prior, points, d, rng)
        values, vectors = np.linalg.eigh(prior)
        prior_inverse = (vectors / values) @ vectors.T
        emp_cov = prior_inverse + float(self.balance_param) * signed_scatter(pairs, y)
        emp_cov = 0.5 * (emp_cov + emp_cov.T)
        if not np.isfinite(emp_cov).all():
            raise ValueError(
                "SDML's graphical lasso input (the prior's inverse plus balance_param times "
                "the signed scatter of the pairs) overflows float64. Lower balance_param, or "
                "rescale X (for example with StandardScaler).")
        if np.linalg.eigvalsh(emp_cov).min() < 0:
            warnings.warn(
                "The input matrix of the graphical lasso (the prior's inverse plus "
                "balance_param times the signed scatter of the pairs) is not positive "
                "semidefinite: the lasso may fail or return a degenerate metric. Lower "
                "balance_param, or pass prior='identity'.",
                compatible(ConvergenceWarning), stacklevel=3)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                _, M = graphical_lasso(emp_cov, alpha=float(self.sparsity_param),
                                       verbose=bool(self.verbose))
        except (FloatingPointError, ValueError, RuntimeWarning,
                np.linalg.LinAlgError) as exc:
            raise ValueError(
                f"SDML's graphical lasso failed on this input ({exc}). Its input matrix "
                "must be close to positive definite and of moderate scale: lower "
                "balance_param (the weight of the pairs), raise sparsity_param, pass "
                "prior='identity', or rescale X (for example with StandardScaler)."
            ) from exc
        if not np.isfinite(M).all() or np.linalg.eigvalsh(M).min() < 0:
            raise ValueError(
                "SDML's graphical lasso returned a matrix that is not positive "
                "semidefinite. Lower balance_param, raise sparsity_param, or pass "
                "prior='identity'."
            )
        self.components_ = components_from_metric(np.atleast_2d(M))
        self.n_features_in_ = d
        return self


class SDML(PairsClassifierMixin, _BaseSDML):
    """Sparse determinant metric learning from labelled pairs.

    M is the sparse inverse covariance that scikit-learn's graphical lasso fits to
    ``P0^{-1} + balance_param * sum_k y_k v_k v_k^T`` (``P0`` the prior metric, ``v_k`` the
    difference of pair k, ``y_k`` +1 for a similar and -1 for a dissimilar pair): a
    log-determinant divergence to the prior, the pairs' distances, and an L1 penalty of
    weight ``sparsity_param`` on M's off-diagonal entries.

    Parameters
    ----------
    balance_param : float, default=0.5
        Weight of the pairs against the prior.
    sparsity_param : float, default=0.01
        The graphical lasso's ``alpha``: the L1 penalty on M's off-diagonal entries.
    prior : {"identity", "covariance", "random"} or ndarray of shape (d, d), \
default="identity"
        The prior metric P0, strictly positive definite: the identity, the inverse
        covariance of the points, a random SPD matrix, or a given one.
    verbose : bool, default=False
        Print the graphical lasso's progress.
    preprocessor : array-like, callable or None, default=None
        With a preprocessor, pairs may be (n_pairs, 2) indices.
    random_state : int, RandomState instance or None, default=None
        Seeds ``prior="random"``.

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
    threshold_ : float
        The distance below which ``predict`` says similar.
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int

    References
    ----------
    G.-J. Qi, J. Tang, Z.-J. Zha, T.-S. Chua and H.-J. Zhang, "An efficient sparse metric
    learning in high-dimensional space via l1-penalized log-determinant regularization",
    ICML 2009.
    """

    def __init__(self, balance_param=0.5, sparsity_param=0.01, prior="identity",
                 verbose=False, preprocessor=None, random_state=None):
        self.balance_param = balance_param
        self.sparsity_param = sparsity_param
        self.prior = prior
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state

    def fit(self, pairs, y, calibration_params=None):
        """Learn the metric from labelled pairs, then calibrate ``threshold_`` on them.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2) of int with
            a preprocessor.
        y : array-like of shape (n_pairs,)
            +1 for a similar pair, -1 for a dissimilar one.
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
        self._fit_pairs(formed, labels, check_random_state(self.random_state))
        self.calibrate_threshold(formed, labels, **calibration)
        return self


class SDML_Supervised(_BaseSDML):
    """SDML with similar and dissimilar pairs drawn from class labels.

    Parameters
    ----------
    balance_param : float, default=0.5
        As in :class:`SDML`.
    sparsity_param : float, default=0.01
        As in :class:`SDML`.
    prior : {"identity", "covariance", "random"} or ndarray, default="identity"
        As in :class:`SDML`.
    n_constraints : int or None, default=None
        Pairs of each kind to draw; None is ``20 n^2``, n the distinct labels in y (an
        unlabelled value counts, as in metric-learn).
    verbose : bool, default=False
    preprocessor : array-like, callable or None, default=None
        With a preprocessor, X may be a 1-D array of indices into it.
    random_state : int, RandomState instance or None, default=None
        Seeds the draw of the pairs (and ``prior="random"``).
    num_constraints : int or "deprecated", default="deprecated"
        metric-learn's old name of ``n_constraints`` (FutureWarning).

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
    must_link_, cannot_link_ : ndarray of shape (n_constraints, 2)
        The drawn row-index pairs.
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from fastdr.metric_learning import SDML_Supervised
    >>> X, y = load_iris(return_X_y=True)
    >>> sdml = SDML_Supervised(prior="covariance", balance_param=1e-5, random_state=0)
    >>> sdml.fit(X, y).transform(X).shape
    (150, 4)
    """

    _parameter_constraints = {
        **_BaseSDML._parameter_constraints,
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "num_constraints": [DEPRECATED, Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, balance_param=0.5, sparsity_param=0.01, prior="identity",
                 n_constraints=None, verbose=False, preprocessor=None, random_state=None,
                 num_constraints="deprecated"):
        self.balance_param = balance_param
        self.sparsity_param = sparsity_param
        self.prior = prior
        self.n_constraints = n_constraints
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.num_constraints = num_constraints

    def fit(self, X, y):
        """Draw pairs from the class labels and learn the metric.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples,) of int with a
            preprocessor.
        y : array-like of shape (n_samples,)
            Class labels (two classes or more; negative numeric labels mean unlabelled).

        Returns
        -------
        self
        """
        validate_params(self)
        n_constraints = renamed(self, "num_constraints", "n_constraints")
        X = fit_points(self, X)
        rng = check_random_state(self.random_state)
        _, self.must_link_, self.cannot_link_ = supervised_pairs(
            y, X.shape[0], "SDML_Supervised", "dissimilar", n_constraints, rng)
        pairs, labels = stack_pairs(X, self.must_link_, self.cannot_link_)
        return self._fit_pairs(pairs, labels, rng)
