"""SCML, sparse compositional metric learning (Shi, Bellet and Sha, AAAI 2014), as in
metric-learn 0.7: M = sum_k w_k b_k b_k^T over K rank-one bases, the sparse weights w >= 0
minimising ``beta sum_k w_k + mean_t [1 + d_M(a, p) - d_M(a, n)]_+`` over triplets (a, p, n)
by metric-learn's stochastic solver (dual averaging with AdaGrad steps). A triplet's row
``D_tk = (b_k.(a - p))^2 - (b_k.(a - n))^2`` is formed on the fly from ``X B^T`` (one row per
distinct point), never stored for all triplets (metric-learn's n_triplets x K floats).
"""

import warnings
from numbers import Integral, Real

import numpy as np

from .._base import BaseEstimator
from .._kernels.learners.scml import sgd_steps, slack_kernel
from .._runtime.blas import single_threaded_blas
from .._validation.arrays import check_array
from .._validation.budget import check_dense_allocation
from .._validation.magnitudes import check_distance_magnitude
from .._validation.params import N_JOBS, Interval, StrOptions, check_random_state, validate_params
from ._base import MahalanobisMixin, components_from_metric
from ._constraints import supervised_codes
from ._order_classifiers import TripletsClassifierMixin
from ._scml_bases import knn_triplets, lda_basis, triplet_diffs_basis
from ._tuples import check_spread, fit_points, form_tuples, resolve_preprocessor

POSITIVE_INT = [Interval(Integral, 1, None, closed="left")]


def triplet_slacks(X, XB, basis, triplets, w):
    """``1 + d_M(a, p) - d_M(a, n)`` per triplet, in a map of at most d rows (``sqrt(w_k) b_k``
    of the active bases, or a square root of M): O(n_triplets min(K_active, d)), not
    metric-learn's O(n_triplets K) product with the stored differences."""
    active = np.flatnonzero(w > 0)
    if active.size <= X.shape[1]:
        Y = XB[:, active] * np.sqrt(w[active])
    else:
        B = basis[active]
        values, vectors = np.linalg.eigh(B.T @ (w[active, None] * B))
        Y = X @ (vectors * np.sqrt(np.maximum(values, 0.0)))
    out = np.empty(triplets.shape[0])
    slack_kernel(np.ascontiguousarray(Y), triplets, out)
    return out


def distinct_points(formed):
    """The distinct points of formed triplets (n, 3, d) and the triplets as indices into them.

    Rows are hashed exactly (their bytes times random odd words, modulo 2^64), sorted by hash
    and compared with their predecessor: 20 times faster than ``unique(axis=0)``. A collision
    only leaves two points unmerged, never merges different ones."""
    n, _, d = formed.shape
    P = np.ascontiguousarray(formed.reshape(-1, d), dtype=np.float64)
    coefficients = np.random.default_rng(0).integers(1, 2**63, size=d, dtype=np.uint64) | 1
    with np.errstate(over="ignore"):
        hashes = (P.view(np.uint64) * coefficients).sum(axis=1, dtype=np.uint64)
    order = np.argsort(hashes, kind="stable")
    P_sorted = P[order]
    new = np.ones(P.shape[0], dtype=bool)
    new[1:] = (hashes[order][1:] != hashes[order][:-1]) | (P_sorted[1:] != P_sorted[:-1]).any(1)
    inverse = np.empty(P.shape[0], dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return P_sorted[new], inverse.reshape(n, 3)


class _BaseSCML(MahalanobisMixin, BaseEstimator):
    _parameter_constraints = {
        "beta": [Interval(Real, 0, None, closed="left")],
        "basis": [StrOptions({"triplet_diffs"}), "array-like"],
        "n_basis": [*POSITIVE_INT, None],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "max_iter": POSITIVE_INT, "output_iter": POSITIVE_INT, "batch_size": POSITIVE_INT,
        "verbose": ["boolean", Interval(Integral, 0, None, closed="left")],
        "preprocessor": ["array-like", callable, None],
        "random_state": ["random_state"],
    }

    #: the basis names ``basis`` may take (metric-learn's attribute)
    _authorized_basis = ("triplet_diffs",)

    def _check_params(self):
        # metric-learn's messages for the two errors its tests pin, before the generic ones
        if isinstance(self.basis, str) and self.basis not in self._authorized_basis:
            raise ValueError("`basis` must be one of the options '{}' or an array of shape "
                             "(n_basis, n_features).".format("', '".join(self._authorized_basis)))
        for name in ("max_iter", "output_iter", "batch_size", "n_basis", "k_genuine",
                     "k_impostor"):
            value = getattr(self, name, None)
            if isinstance(value, Real) and not isinstance(value, Integral):
                raise ValueError(f"{name} should be an integer, instead it is of type "
                                 f"{type(value)}")
        validate_params(self)
        if self.output_iter > self.max_iter:
            # metric-learn's message (its tests compare it for equality)
            raise ValueError("The value of output_iter must be equal or smaller than "
                             "max_iter.")

    def _default_n_basis(self, n_basis):
        if self.n_basis is not None:
            return self.n_basis
        warnings.warn("As no value for `n_basis` was selected, the number of basis will be "
                      f"set to n_basis= {n_basis}", UserWarning, stacklevel=4)
        return n_basis

    def _generate_bases_dist_diff(self, triplets, X):
        """The "triplet_diffs" basis for row-index triplets into X, and its size
        (metric-learn's private method, which its tests call).

        Returns
        -------
        basis : ndarray of shape (n_basis, n_features)
        n_basis : int
        """
        X = check_array(X, dtype=np.float64)
        triplets = np.asarray(triplets)
        if (triplets.ndim != 2 or triplets.shape[1] != 3 or triplets.dtype.kind not in "iu"
                or triplets.min() < 0 or triplets.max() >= X.shape[0]):
            raise ValueError(f"triplets must be (n, 3) row indices into X's {X.shape[0]} rows.")
        n_basis = self._default_n_basis(80 * X.shape[1])
        basis = triplet_diffs_basis(X, triplets.astype(np.int64), n_basis,
                                    check_random_state(self.random_state))
        return basis, n_basis

    def _given_basis(self, d):
        basis = check_array(self.basis, name="basis")
        if basis.shape[1] != d:
            raise ValueError(f"The dimensionality ({basis.shape[1]}) of the provided bases "
                             f"must match the dimensionality of the data ({d}).")
        if self.n_basis is not None and self.n_basis != basis.shape[0]:
            raise ValueError(f"n_basis={self.n_basis} but the basis array has "
                             f"{basis.shape[0]} rows. Pass n_basis=None with a basis array.")
        return np.asarray(basis, dtype=np.float64)

    def _fit_triplets(self, X, triplets, basis):
        """The solver on ``X[triplets]`` with rows of ``basis``; sets the fitted attributes."""
        n, K = triplets.shape[0], basis.shape[0]
        check_dense_allocation((X.shape[0], K), np.float64, what="X times the basis",
                               alternative="Pass a smaller n_basis, or fewer distinct points.")
        check_dense_allocation((self.max_iter, self.batch_size), np.int64,
                               what="the triplet draws", alternative="Lower max_iter.")
        XB = np.ascontiguousarray(X @ basis.T)
        with np.errstate(over="ignore", invalid="ignore"):  # squared spreads along the bases
            finite = np.isfinite(np.ptp(XB, axis=0) ** 2).all() if XB.size else True
        if not finite:
            raise ValueError("The points' squared differences along a basis overflow float64. "
                             "Rescale X (for example with StandardScaler) or the basis rows.")
        rng = check_random_state(self.random_state)
        draw = rng.randint if hasattr(rng, "randint") else rng.integers
        draws = np.ascontiguousarray(draw(0, n, size=(self.max_iter, self.batch_size)),
                                     dtype=np.int64)
        T = np.ascontiguousarray(triplets, dtype=np.int64)
        w, avg_grad, ada_grad = np.zeros(K), np.zeros(K), np.zeros(K)
        rows, grad = np.empty((self.batch_size, K)), np.empty(K)
        best_obj, best_w = np.inf, None
        # the weights are judged every output_iter steps and the best kept; steps after the
        # last judgement cannot change the result, so they are not run
        with single_threaded_blas():  # small eigendecompositions between kernel calls
            for stop in range(self.output_iter, self.max_iter + 1, self.output_iter):
                sgd_steps(XB, T, draws, stop - self.output_iter, stop, float(self.beta),
                          float(self.gamma), w, avg_grad, ada_grad, rows, grad)
                slack = triplet_slacks(X, XB, basis, T, w)
                obj = np.sum(w) * self.beta + np.sum(slack[slack > 0]) / n
                if not np.isfinite(obj):
                    raise ValueError("SCML's objective overflows float64: raise gamma, or "
                                     "rescale X (for example with StandardScaler).")
                if self.verbose:
                    print(f"[{type(self).__name__}] iter {stop}\t obj {obj:.6f}\t num_imp "
                          f"{int(np.sum(slack > 0))}")
                if obj < best_obj:
                    best_obj, best_w = obj, w.copy()
        if self.verbose:
            print("max iteration reached.")
        self.components_ = self._components_from_weights(basis, best_w)
        self.n_iter_, self.n_features_in_ = self.max_iter, X.shape[1]
        return self

    @staticmethod
    def _components_from_weights(basis, w):
        """L with ``L^T L = sum_k w_k b_k b_k^T``: rows ``sqrt(w_k) b_k`` when fewer bases than
        features have weight (metric-learn's warning), else metric-learn's factor of M."""
        active, d = np.flatnonzero(w > 0), basis.shape[1]
        if active.size == 0:
            warnings.warn("Every basis weight is zero: the learned metric is 0 (all distances "
                          "vanish). Lower beta, or raise gamma or max_iter.", stacklevel=4)
            return np.zeros((1, d))
        B, w = basis[active], w[active]
        if active.size < d:
            warnings.warn("The number of bases with nonzero weight is less than the number "
                          "of features of the input, in consequence the learned "
                          f"transformation reduces the dimension to {active.size}.", stacklevel=4)
            return np.sqrt(w)[:, None] * B
        return components_from_metric(B.T @ (w[:, None] * B))


class SCML(TripletsClassifierMixin, _BaseSCML):
    """Sparse compositional metric learning from triplets.

    Each triplet (a, p, n) says that a is closer to p than to n; ``predict``,
    ``decision_function`` and ``score`` classify triplets.

    Parameters
    ----------
    beta : float, default=1e-5
        Weight of the L1 penalty on the basis weights.
    basis : "triplet_diffs" or ndarray of shape (n_basis, n_features), default="triplet_diffs"
        The rank-one bases: eigenvectors (nonzero eigenvalue) of ``sum dp dp^T - sum dn dn^T``
        over the differences of n_features drawn triplets, drawn again until n_basis; or rows.
    n_basis : int or None, default=None
        Number of bases; None is 80 n_features (with metric-learn's warning).
    gamma : float, default=5e-3
        Inverse learning rate: larger is smaller steps.
    max_iter, output_iter, batch_size : int, default=10000, 500, 10
        Stochastic steps, of batch_size drawn triplets; every output_iter steps the weights
        are judged (and printed when verbose), the best judged kept.
    verbose : bool, default=False
    preprocessor : array-like, callable or None, default=None
        With a preprocessor, triplets may be (n_triplets, 3) indices into it.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws (an int seeds each stage afresh, as in metric-learn).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        L with ``L^T L = M``; fewer rows than features when fewer bases have weight.
    n_iter_ : int
        Steps run (max_iter).
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int

    References
    ----------
    Y. Shi, A. Bellet and F. Sha, "Sparse compositional metric learning", AAAI 2014.
    """

    def __init__(self, beta=1e-5, basis="triplet_diffs", n_basis=None, gamma=5e-3,
                 max_iter=10000, output_iter=500, batch_size=10, verbose=False,
                 preprocessor=None, random_state=None):
        self.beta, self.basis, self.n_basis, self.gamma = beta, basis, n_basis, gamma
        self.max_iter, self.output_iter, self.batch_size = max_iter, output_iter, batch_size
        self.verbose, self.preprocessor, self.random_state = verbose, preprocessor, random_state

    def fit(self, triplets):
        """Learn the metric from triplets.

        Parameters
        ----------
        triplets : array-like of shape (n_triplets, 3, n_features), or (n_triplets, 3) of
            int with a preprocessor. Each ``(a, p, n)``: a should be closer to p than to n.

        Returns
        -------
        self
        """
        self._check_params()
        self.preprocessor_ = resolve_preprocessor(self.preprocessor)
        formed = form_tuples(self.preprocessor_, triplets, 3, "triplets", estimator=self)
        check_distance_magnitude(formed.reshape(-1, formed.shape[2]), "triplets")
        check_spread(formed.reshape(-1, formed.shape[2]), "triplets")
        X, T = distinct_points(formed)
        basis = (self._generate_bases_dist_diff(T, X)[0] if isinstance(self.basis, str)
                 else self._given_basis(X.shape[1]))
        return self._fit_triplets(X, T, basis)


class SCML_Supervised(_BaseSCML):
    """SCML with triplets formed from class labels.

    The triplets are (a, g, i) for each labelled point a, g among its k_genuine nearest
    points of its class, i among its k_impostor nearest of other classes.

    Parameters
    ----------
    k_genuine, k_impostor : int, default=3, 10
        Neighbours per point of its class (at most its size minus one) and of the others.
    beta : float, default=1e-5
        As in :class:`SCML`.
    basis : {"lda", "triplet_diffs"} or ndarray of shape (n_basis, n_features), \
default="lda"
        "lda": the discriminant directions (e each) of regions made of the nearest points of
        every class to k-means centres, at two scales; "triplet_diffs" as in :class:`SCML`.
    n_basis, gamma, max_iter, output_iter, batch_size, verbose
        As in :class:`SCML`; n_basis None with "lda" is min(20 n_features, 2 n_samples e - 1),
        e = min(n_classes - 1, n_features).
    preprocessor : array-like, callable or None, default=None
        With a preprocessor, X may be a 1-D array of indices into it.
    random_state : int, RandomState instance or None, default=None
        Seeds k-means and the draws (an int seeds each stage afresh, as in metric-learn).
    n_jobs : int or None, default=None
        Threads of the neighbour searches (fastdr's extra; the result does not depend on it).

    Attributes
    ----------
    components_, n_iter_, preprocessor_, n_features_in_
        As in :class:`SCML`.
    triplets_ : ndarray of shape (n_triplets, 3)
        The formed triplets, as row indices into X (negative labels mean unlabelled: such
        rows are in no triplet and no region).
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from fastdr.metric_learning import SCML_Supervised
    >>> X, y = load_iris(return_X_y=True)
    >>> SCML_Supervised(n_basis=80, random_state=0).fit(X, y).transform(X).shape
    (150, 4)
    """

    _parameter_constraints = {
        **_BaseSCML._parameter_constraints,
        "basis": [StrOptions({"triplet_diffs", "lda"}), "array-like"],
        "k_genuine": POSITIVE_INT, "k_impostor": POSITIVE_INT,
        "n_jobs": N_JOBS,
    }

    def __init__(self, k_genuine=3, k_impostor=10, beta=1e-5, basis="lda", n_basis=None,
                 gamma=5e-3, max_iter=10000, output_iter=500, batch_size=10, verbose=False,
                 preprocessor=None, random_state=None, *, n_jobs=None):
        self.k_genuine, self.k_impostor = k_genuine, k_impostor
        self.beta, self.basis, self.n_basis, self.gamma = beta, basis, n_basis, gamma
        self.max_iter, self.output_iter, self.batch_size = max_iter, output_iter, batch_size
        self.verbose, self.preprocessor, self.random_state = verbose, preprocessor, random_state
        self.n_jobs = n_jobs

    _authorized_basis = ("triplet_diffs", "lda")

    def _lda_bases(self, X, codes):
        """The "lda" basis of labelled rows X (class codes >= 0), and its size."""
        d = X.shape[1]
        limit = 2 * X.shape[0] * min(int(codes.max()), d)
        n_basis = self._default_n_basis(min(20 * d, limit - 1))
        if n_basis >= limit:
            raise ValueError(f"Not enough labelled samples to generate {n_basis} LDA bases "
                             f"from {X.shape[0]} samples, {d} feature(s) and "
                             f"{int(codes.max()) + 1} classes: n_basis must be smaller "
                             f"than {limit} (2 n_samples min(n_classes - 1, n_features))."
                             " Lower n_basis.")
        if n_basis <= int(codes.max()):
            warnings.warn("The number of basis is less than the number of classes, which "
                          "may lead to poor discriminative performance.", stacklevel=3)
        return lda_basis(X, codes, n_basis, check_random_state(self.random_state),
                          self.n_jobs), n_basis

    def _generate_bases_LDA(self, X, y):
        """The "lda" basis for X and its labels, and its size (metric-learn's private method,
        which its tests call).

        Returns
        -------
        basis : ndarray of shape (n_basis, n_features)
        n_basis : int
        """
        X = check_array(X, dtype=np.float64)
        _, codes = supervised_codes(y, X.shape[0], "SCML_Supervised", "impostor")
        labelled = np.flatnonzero(codes >= 0)
        return self._lda_bases(X[labelled], codes[labelled])

    def _fastdr_tags(self):  # fit needs y
        return {"target_tags.required": True}

    def fit(self, X, y):
        """Form triplets from the labels and learn the metric.

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
        self._check_params()
        X = np.ascontiguousarray(fit_points(self, X), dtype=np.float64)
        _, codes = supervised_codes(y, X.shape[0], "SCML_Supervised", "impostor")
        labelled = np.flatnonzero(codes >= 0)
        X, codes, d = X[labelled], codes[labelled], X.shape[1]
        if isinstance(self.basis, str) and self.basis == "lda":
            basis = self._lda_bases(X, codes)[0]
        elif not isinstance(self.basis, str):
            basis = self._given_basis(d)
        triplets = knn_triplets(X, codes, self.k_genuine, self.k_impostor, self.n_jobs)
        if isinstance(self.basis, str) and self.basis == "triplet_diffs":
            basis = self._generate_bases_dist_diff(triplets, X)[0]
        self.triplets_ = labelled[triplets]
        return self._fit_triplets(X, triplets, basis)
