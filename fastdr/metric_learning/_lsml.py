"""LSML, least-squares metric learning from relative comparisons (Liu, Sun, Wang, Li and
Wang, 2012): quadruplets ``(a, b, c, d)`` that say ``d(a, b) < d(c, d)``."""

from numbers import Integral, Real

import numpy as np

from .._base import BaseEstimator
from .._validation.arrays import check_array
from .._validation.magnitudes import check_distance_magnitude
from .._validation.params import Interval, StrOptions, check_random_state, validate_params
from ._base import DEPRECATED, MahalanobisMixin, components_from_metric, renamed
from ._constraints import supervised_pairs
from ._order_classifiers import QuadrupletsClassifierMixin
from ._prior import prior_metric
from ._tuples import check_spread, fit_points, form_tuples, resolve_preprocessor

#: the step sizes tried along the gradient at each iteration, divided by its norm
#: (metric-learn's grid)
STEP_SIZES = np.logspace(-10, 0, 10)
#: the smallest eigenvalue a step keeps: each candidate metric is clipped to it
MIN_EIGENVALUE = 1e-8


def _row_norms(V, M):
    """``v_k^T M v_k`` for each row of V."""
    return np.einsum("ij,ij->i", V @ M, V)


def comparison_loss(dab, dcd, w):
    """``sum_k w_k (sqrt(dab_k) - sqrt(dcd_k))^2`` over the violated quadruplets
    (``dab_k > dcd_k``); dab and dcd may carry a trailing axis of candidate metrics."""
    violated = dab > dcd
    residual = np.where(violated, np.sqrt(np.maximum(dab, 0.0)) -
                        np.sqrt(np.maximum(dcd, 0.0)), 0.0)
    return w @ residual ** 2


def lsml_loss(M, vab, vcd, w, prior_inv):
    """LSML's objective at M: the weighted squared residuals of the violated comparisons
    plus the LogDet divergence to the prior, ``tr(M P0^{-1}) - log det M`` (constants
    dropped)."""
    sign, logdet = np.linalg.slogdet(M)
    return (comparison_loss(_row_norms(vab, M), _row_norms(vcd, M), w)
            + np.sum(M * prior_inv) - sign * logdet)


def lsml_gradient(M_inv, vab, vcd, w, prior_inv, dab, dcd):
    """The gradient of :func:`lsml_loss` at a positive definite M (given its inverse and the
    quadruplets' squared distances in it).

    Each violated quadruplet adds ``w_k (1 - sqrt(dcd/dab)) v_ab v_ab^T + w_k (1 -
    sqrt(dab/dcd)) v_cd v_cd^T``, with its weight: metric-learn 0.7 leaves ``w_k`` out of the
    gradient though its loss has it, so that its steps follow another function. A pair of
    identical points (``v = 0``) adds nothing.
    """
    violated = np.flatnonzero(dab > dcd)
    ab, cd, wv = dab[violated], dcd[violated], w[violated]
    with np.errstate(divide="ignore", invalid="ignore"):
        c_ab = wv * (1.0 - np.sqrt(cd / ab))
        c_cd = np.where(cd > 0, wv * (1.0 - np.sqrt(ab / cd)), 0.0)
    Vab, Vcd = vab[violated], vcd[violated]
    grad = prior_inv - M_inv + (Vab.T * c_ab) @ Vab + (Vcd.T * c_cd) @ Vcd
    return 0.5 * (grad + grad.T)


class _Metric:
    """A positive definite M with what each iteration needs of it, from one eigh."""

    def __init__(self, M):
        self.M = M
        self.values, vectors = np.linalg.eigh(M)
        if not self.values[0] > 0:
            raise ValueError("LSML's metric left the positive definite matrices in float64; "
                             "rescale X, for example with StandardScaler.")
        self.inverse = (vectors / self.values) @ vectors.T
        self.inverse_sqrt = (vectors / np.sqrt(self.values)) @ vectors.T
        self.logdet = np.log(self.values).sum()


def best_step(metric, grad, vab, vcd, w, prior_inv, dab, dcd):
    """metric-learn's line search: the step of lowest loss among :func:`candidates`.

    Returns
    -------
    loss : float
    M : ndarray of shape (d, d)
    dab, dcd : ndarray of shape (n,)
        The quadruplets' squared distances in the new M.
    """
    losses, metrics, dab_new, dcd_new = candidates(metric, grad, vab, vcd, w, prior_inv,
                                                   dab, dcd)
    k = int(np.argmin(losses))
    return losses[k], metrics(k), dab_new[:, k], dcd_new[:, k]


def candidates(metric, grad, vab, vcd, w, prior_inv, dab, dcd):
    """The losses of metric-learn's candidate steps: each step of ``STEP_SIZES / ||grad||``,
    its metric ``M - s G`` projected on the matrices with eigenvalues at least
    ``MIN_EIGENVALUE``.

    No candidate costs an O(n d^2) product or, unless it needs the projection, a
    decomposition of its own: ``v^T (M - s G) v = d - s v^T G v``, and ``log det (M - s G)
    = log det M + sum_i log(1 - s mu_i)`` with ``mu`` the eigenvalues of ``M^{-1/2} G
    M^{-1/2}``. Those factors also bound the candidate's smallest eigenvalue from below by
    ``lambda_min(M) min_i (1 - s mu_i)``; a candidate the bound does not clear is decomposed
    and clipped, as metric-learn does each one, its distances corrected on the clipped
    eigenvectors only.

    Returns
    -------
    losses : ndarray of shape (n_steps,)
    metric_of : callable
        ``metric_of(k)`` is candidate k's metric.
    dab, dcd : ndarray of shape (n, n_steps)
        The quadruplets' squared distances in each candidate.
    """
    steps = STEP_SIZES / np.linalg.norm(grad)
    K = metric.inverse_sqrt @ grad @ metric.inverse_sqrt
    factors = 1.0 - steps[:, None] * np.linalg.eigvalsh(0.5 * (K + K.T))[None]
    exact = factors.min(axis=1) * metric.values[0] >= MIN_EIGENVALUE
    g_ab, g_cd = _row_norms(vab, grad), _row_norms(vcd, grad)
    dab_new = dab[:, None] - g_ab[:, None] * steps
    dcd_new = dcd[:, None] - g_cd[:, None] * steps
    trace = np.sum(metric.M * prior_inv) - steps * np.sum(grad * prior_inv)
    with np.errstate(invalid="ignore", divide="ignore"):
        logdet = metric.logdet + np.log(factors).sum(axis=1)
    projected = {}
    for k in np.flatnonzero(~exact):
        values, vectors = np.linalg.eigh(metric.M - steps[k] * grad)
        clipped = np.maximum(values, MIN_EIGENVALUE)
        lifted = values < MIN_EIGENVALUE
        V, lift = vectors[:, lifted], clipped[lifted] - values[lifted]
        dab_new[:, k] += ((vab @ V) ** 2) @ lift
        dcd_new[:, k] += ((vcd @ V) ** 2) @ lift
        # tr(P0^{-1} V diag(c) V^T) = sum_i c_i v_i^T P0^{-1} v_i
        trace[k] = np.einsum("ji,ji->i", vectors, prior_inv @ vectors) @ clipped
        logdet[k] = np.log(clipped).sum()
        projected[k] = (vectors * clipped) @ vectors.T
    losses = comparison_loss(dab_new, dcd_new, w) + trace - logdet

    def metric_of(k):
        return projected[k] if k in projected else metric.M - steps[k] * grad

    return losses, metric_of, dab_new, dcd_new


def constraint_weights(weights, n):
    """Quadruplet weights normalised to sum 1 (a copy: the caller's array is left alone)."""
    if weights is None:
        return np.full(n, 1.0 / n)
    w = check_array(weights, name="weights", ensure_2d=False, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(f"weights must hold one weight per quadruplet: expected shape "
                         f"({n},), got {w.shape}.")
    if (w < 0).any() or not w.sum() > 0:
        raise ValueError("weights must be >= 0 with a positive sum; got "
                         f"min {w.min():.3g}, sum {w.sum():.3g}.")
    return w / w.sum()


class _BaseLSML(MahalanobisMixin, BaseEstimator):
    _parameter_constraints = {
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "prior": [StrOptions({"identity", "covariance", "random"}), np.ndarray],
        "verbose": ["boolean", Interval(Integral, 0, None, closed="left")],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
    }

    def _fit_quadruplets(self, quadruplets, weights, rng):
        """Projected gradient descent on M from formed quadruplets (n, 4, d)."""
        points = quadruplets.reshape(-1, quadruplets.shape[2])
        check_distance_magnitude(points, "quadruplets")
        check_spread(points, "quadruplets")
        d = quadruplets.shape[2]
        vab = np.ascontiguousarray(quadruplets[:, 0] - quadruplets[:, 1], dtype=np.float64)
        vcd = np.ascontiguousarray(quadruplets[:, 2] - quadruplets[:, 3], dtype=np.float64)
        self.w_ = w = constraint_weights(weights, vab.shape[0])
        M = prior_metric(self.prior, points, d, rng)
        values, vectors = np.linalg.eigh(M)
        prior_inv = (vectors / values) @ vectors.T
        loss = lsml_loss(M, vab, vcd, w, prior_inv)
        if self.verbose:
            print("initial loss", loss)
        dab, dcd = _row_norms(vab, M), _row_norms(vcd, M)
        for it in range(1, self.max_iter + 1):
            metric = _Metric(M)
            with np.errstate(over="ignore", invalid="ignore"):  # checked just below
                grad = lsml_gradient(metric.inverse, vab, vcd, w, prior_inv, dab, dcd)
                grad_norm = np.linalg.norm(grad)
            if not np.isfinite(grad_norm):
                # the residuals are distances, the prior's term is not: LSML is not
                # scale-free, and squared distances near 1e300 overflow the gradient's sums
                raise ValueError("LSML's gradient left the float64 range; rescale X (for "
                                 "example with StandardScaler).")
            if grad_norm < self.tol:
                break
            step_loss, step_M, step_dab, step_dcd = best_step(
                metric, grad, vab, vcd, w, prior_inv, dab, dcd)
            if self.verbose:
                print("iter", it, "cost", min(loss, step_loss), "gradient norm", grad_norm)
            if not step_loss < loss:  # no step lowers the loss: a (projected) minimum
                break
            loss, M, dab, dcd = step_loss, step_M, step_dab, step_dcd
        else:
            if self.verbose:
                print("Didn't converge after", it, "iterations. Final loss:", loss)
        self.n_iter_ = it
        self.components_ = components_from_metric(M)
        self.n_features_in_ = d
        return self


class LSML(QuadrupletsClassifierMixin, _BaseLSML):
    """Least-squares metric learning from relative comparisons (quadruplets).

    Each quadruplet ``(a, b, c, d)`` says that a is closer to b than c is to d. LSML
    minimises the weighted squared residuals ``(sqrt(d_M(a, b)) - sqrt(d_M(c, d)))^2`` of the
    violated comparisons plus the LogDet divergence of M to a prior, by gradient steps
    projected on the positive definite matrices, with metric-learn's step-size search.

    Parameters
    ----------
    tol : float, default=1e-3
        Stop when the gradient's Frobenius norm falls below it.
    max_iter : int, default=1000
        Maximum gradient steps.
    prior : {"identity", "covariance", "random"} or ndarray of shape (d, d), \
default="identity"
        The prior metric (strictly positive definite), also the start: the identity, the
        inverse covariance of the quadruplets' points, a random SPD matrix, or a given one.
    verbose : bool, default=False
        Print the loss at each step.
    preprocessor : array-like, callable or None, default=None
        With a preprocessor, quadruplets may be (n_quadruplets, 4) indices.
    random_state : int, RandomState instance or None, default=None
        Seeds ``prior="random"``.

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
        L with ``M = L^T L``.
    n_iter_ : int
        Gradient steps taken.
    w_ : ndarray of shape (n_quadruplets,)
        The quadruplets' weights, normalised to sum 1.
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int

    Notes
    -----
    metric-learn 0.7 leaves the weights out of its gradient (its loss has them); fastdr
    follows the loss's true gradient, so the two take different steps and stop at different
    points (fastdr's loss is as low or lower). fastdr also leaves the caller's ``weights``
    array as it was (metric-learn normalises it in place).

    References
    ----------
    E. Y. Liu, Z. Guo, X. Zhang, V. Jojic and W. Wang, "Metric learning from relative
    comparisons by minimizing squared residual", ICDM 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from fastdr.metric_learning import LSML
    >>> quadruplets = np.array([[[1.2, 7.5], [1.3, 1.5], [6.4, 2.6], [6.2, 9.7]],
    ...                         [[1.3, 4.5], [3.2, 4.6], [6.2, 5.5], [5.4, 5.4]],
    ...                         [[3.2, 7.5], [3.3, 1.5], [8.4, 2.6], [8.2, 9.7]],
    ...                         [[3.3, 4.5], [5.2, 4.6], [8.2, 5.5], [7.4, 5.4]]])
    >>> lsml = LSML().fit(quadruplets)
    >>> lsml.predict(quadruplets)
    array([1., 1., 1., 1.])
    """

    def __init__(self, tol=1e-3, max_iter=1000, prior="identity", verbose=False,
                 preprocessor=None, random_state=None):
        self.tol = tol
        self.max_iter = max_iter
        self.prior = prior
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state

    def fit(self, quadruplets, weights=None):
        """Learn the metric from quadruplets, each first pair closer than its second.

        Parameters
        ----------
        quadruplets : array-like of shape (n_quadruplets, 4, n_features), or
            (n_quadruplets, 4) of int with a preprocessor.
        weights : array-like of shape (n_quadruplets,) or None, default=None
            Each quadruplet's weight (>= 0); None weighs them equally.

        Returns
        -------
        self
        """
        validate_params(self)
        self.preprocessor_ = resolve_preprocessor(self.preprocessor)
        formed = form_tuples(self.preprocessor_, quadruplets, 4, "quadruplets", estimator=self)
        return self._fit_quadruplets(formed, weights, check_random_state(self.random_state))


class LSML_Supervised(_BaseLSML):
    """LSML with quadruplets drawn from class labels.

    Each quadruplet is a pair of one class (to be the closer) and a pair of two classes.

    Parameters
    ----------
    tol : float, default=1e-3
        As in :class:`LSML`.
    max_iter : int, default=1000
        As in :class:`LSML`.
    prior : {"identity", "covariance", "random"} or ndarray, default="identity"
        As in :class:`LSML`.
    n_constraints : int or None, default=None
        Quadruplets to draw; None is ``20 n^2``, n the distinct labels in y (an unlabelled
        value counts, as in metric-learn).
    weights : array-like of shape (n_constraints,) or None, default=None
        Each quadruplet's weight; None weighs them equally.
    verbose : bool, default=False
    preprocessor : array-like, callable or None, default=None
        With a preprocessor, X may be a 1-D array of indices into it.
    random_state : int, RandomState instance or None, default=None
        Seeds the draw of the quadruplets (and ``prior="random"``).
    num_constraints : int or "deprecated", default="deprecated"
        metric-learn's old name of ``n_constraints`` (FutureWarning).

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
    n_iter_ : int
    w_ : ndarray of shape (n_constraints,)
    quadruplets_ : ndarray of shape (n_constraints, 4)
        The drawn row indices: a must-link pair, then a cannot-link pair.
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from fastdr.metric_learning import LSML_Supervised
    >>> X, y = load_iris(return_X_y=True)
    >>> lsml = LSML_Supervised(n_constraints=200, random_state=0).fit(X, y)
    >>> lsml.transform(X).shape
    (150, 4)
    """

    _parameter_constraints = {
        **_BaseLSML._parameter_constraints,
        "n_constraints": [Interval(Integral, 1, None, closed="left"), None],
        "weights": ["array-like", None],
        "num_constraints": [DEPRECATED, Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, tol=1e-3, max_iter=1000, prior="identity", n_constraints=None,
                 weights=None, verbose=False, preprocessor=None, random_state=None,
                 num_constraints="deprecated"):
        self.tol = tol
        self.max_iter = max_iter
        self.prior = prior
        self.n_constraints = n_constraints
        self.weights = weights
        self.verbose = verbose
        self.preprocessor = preprocessor
        self.random_state = random_state
        self.num_constraints = num_constraints

    def fit(self, X, y):
        """Draw quadruplets from the class labels and learn the metric.

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
        _, must_link, cannot_link = supervised_pairs(
            y, X.shape[0], "LSML_Supervised", "cannot-link", n_constraints, rng)
        self.quadruplets_ = np.concatenate([must_link, cannot_link], axis=1)
        return self._fit_quadruplets(X[self.quadruplets_], self.weights, rng)
