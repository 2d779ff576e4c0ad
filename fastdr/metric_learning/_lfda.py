"""``LFDA``: local Fisher discriminant analysis (Sugiyama, 2007), metric-learn's interface.

The within-class affinity ``A_ij = exp(-|x_i - x_j|^2 / (sigma_i sigma_j))`` (sigma_i: the
distance from x_i to its k-th nearest neighbour in its class) weights the scatter
matrices, so that a class made of separate clusters is not pulled into one. The affinity is
never stored: each class is visited in blocks of rows, and only d x d sums are kept.
"""

import warnings
from numbers import Integral

import numpy as np
from scipy.linalg import LinAlgError, eigh

from .._base import BaseEstimator
from .._validation.params import Interval, StrOptions, validate_params
from ._base import (
    METRIC_LEARN_N_COMPONENTS,
    MahalanobisMixin,
    check_labelled_data,
    data_span,
    metric_learn_n_components,
)
from ._tuples import fit_points

#: rows of a class per block of affinities: BLOCK x n_c float64 at most (64 MB at n_c = 4M)
BLOCK = 2048


def _squared_distances(Xb, Xc, sq_b, sq_c):
    """Squared distances between the rows of Xb and Xc (both centred on the class mean)."""
    D = Xb @ Xc.T
    D *= -2.0
    D += sq_b[:, None]
    D += sq_c[None, :]
    return np.maximum(D, 0.0, out=D)


def _kth_distance(D, start, k):
    """sigma for the rows of a block of squared distances: the distance to the k-th nearest
    other row. The row's own entry is set to exactly 0, the smallest, so rank k (0-based) is
    its k-th neighbour (a duplicate point counts, at distance 0)."""
    D[np.arange(D.shape[0]), np.arange(start, start + D.shape[0])] = 0.0
    return np.sqrt(np.partition(D, k, axis=1)[:, k])


def _affinity_inplace(D, inv_b, inv, zero_b, zero):
    """``A = exp(-D / (sigma_i sigma_j))`` over D's storage; 0 where either sigma is 0."""
    D *= inv_b[:, None]
    D *= inv[None, :]
    np.negative(D, out=D)
    np.exp(D, out=D)
    D[zero_b] = 0.0  # a point with k duplicates has no scale: no affinity
    D[:, zero] = 0.0
    return D


def class_scatter(Xc, k):
    """``G = Xc^T (diag(A 1) - A) Xc`` for one class, A its local-scaling affinity.

    ``G = 1/2 sum_ij A_ij (x_i - x_j)(x_i - x_j)^T``: a class's locally weighted scatter.

    Parameters
    ----------
    Xc : ndarray of shape (n_c, d), float64
    k : int
        The neighbour rank of the local scale (already at most n_c - 1).

    Returns
    -------
    ndarray of shape (d, d)
    """
    n, d = Xc.shape
    Xc = Xc - Xc.mean(axis=0)  # distances and G do not move; their round-off shrinks
    sq = np.einsum("ij,ij->i", Xc, Xc)
    starts = range(0, n, BLOCK)
    first = _squared_distances(Xc[:BLOCK], Xc, sq[:BLOCK], sq)
    sigma = np.empty(n)
    sigma[:first.shape[0]] = _kth_distance(first, 0, k)
    for start in starts[1:]:  # the other blocks' scales, before any affinity
        stop = min(start + BLOCK, n)
        D = _squared_distances(Xc[start:stop], Xc, sq[start:stop], sq)
        sigma[start:stop] = _kth_distance(D, start, k)
    zero = sigma == 0
    with np.errstate(divide="ignore"):
        inv = np.where(zero, 0.0, 1.0 / sigma)
    G = np.zeros((d, d))
    for start in starts:
        stop = min(start + BLOCK, n)
        # one block's distances serve both passes when the class fits in one block
        D = first if start == 0 else _squared_distances(Xc[start:stop], Xc, sq[start:stop], sq)
        A = _affinity_inplace(D, inv[start:stop], inv, zero[start:stop], zero)
        Xb = Xc[start:stop]
        G += (Xb * A.sum(axis=1)[:, None]).T @ Xb - Xb.T @ (A @ Xc)
    return G


def _generalised_top(Sb, Sw, Xf, dim):
    """The top ``dim`` solutions of ``Sb v = lambda Sw v``, within the span of the data.

    Directions in which the (centred) data do not vary carry no information and make Sw
    singular (a constant feature, a feature that is a combination of others: digits has
    both): the problem is solved in the data's span and mapped back, and the components past
    its rank are zero. A direction constant within every class but not across them makes
    Sw singular within the span too (a perfect separation, of infinite ratio); Sw then gets
    a ridge of ``1e-10`` times its largest diagonal entry (or the total scatter's).

    Returns
    -------
    values : ndarray of shape (dim,)
        By decreasing value (0 past the rank).
    vectors : ndarray of shape (n_features, dim)
        ``v^T Sw v = 1`` for each solution within the rank; 0 past it.
    """
    d = Sb.shape[0]
    U = data_span(Xf)
    r = U.shape[1]
    values, vectors = np.zeros(dim), np.zeros((d, dim))
    if r == 0:
        return values, vectors
    Sb_r, Sw_r = U.T @ Sb @ U, U.T @ Sw @ U
    Sb_r, Sw_r = 0.5 * (Sb_r + Sb_r.T), 0.5 * (Sw_r + Sw_r.T)
    top = min(dim, r)
    if not np.diag(Sw_r).max() > 0:
        raise ValueError(
            "LFDA's within-class affinities are all 0: every point has its k-th neighbour at "
            "distance 0 (repeated rows), so no local scale exists. Pass a larger k or remove "
            "repeated rows."
        )
    try:
        vals, vecs = eigh(Sb_r, Sw_r, subset_by_index=(r - top, r - 1))
    except LinAlgError:
        try:
            ridge = 1e-10 * np.diag(Sw_r).max() * np.eye(r)
            vals, vecs = eigh(Sb_r, Sw_r + ridge, subset_by_index=(r - top, r - 1))
        except LinAlgError:
            raise ValueError(
                "LFDA's within-class scatter is singular within the data's span (repeated "
                "rows, or classes whose points coincide along some direction). Remove "
                "repeated rows, pass a larger k, or reduce X with PCA first."
            ) from None
    values[:top] = vals[::-1]
    vectors[:, :top] = U @ vecs[:, ::-1]
    return values, vectors


class LFDA(MahalanobisMixin, BaseEstimator):
    """Local Fisher discriminant analysis: supervised reduction that keeps multimodal classes.

    Fisher's criterion (between-class over within-class scatter) with each pair of a class
    weighted by its local-scaling affinity, solved as a symmetric generalised eigenproblem.
    metric-learn's parameters and defaults; see the Notes for where the numbers differ.

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension of the embedding; None keeps n_features.
    k : int or None, default=None
        The neighbour rank of the local scale sigma_i. None is ``min(7, n_features - 1)``
        (at least 1);
        a k of n_features or more is reduced to ``n_features - 1`` with a warning
        (metric-learn's rule), and in each class to at most its size minus one.
    embedding_type : {"weighted", "orthonormalized", "plain"}, default="weighted"
        "weighted" scales each eigenvector by the square root of its eigenvalue;
        "orthonormalized" orthonormalises them (QR); "plain" keeps them as solved
        (normalised so that ``v^T S_w v = 1``).
    preprocessor : array-like of shape (n_samples, n_features), callable or None, \
default=None
        With a preprocessor, X may be a 1-D array of indices into it.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The learned map L (``transform`` is ``X L^T``), by decreasing eigenvalue.
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    Notes
    -----
    Differences from metric-learn 0.7, each a fix:

    * each class's neighbour rank is ``min(k, n_c - 1)``; metric-learn lowers k for every
      later class once a small class is met, so its result depends on the order of the
      classes;
    * the eigenproblem is solved densely (``scipy.linalg.eigh``), not by ARPACK; the
      eigenvectors agree up to sign, and each sign is fixed (largest entry positive);
    * an eigenvalue below zero by round-off gets weight 0 in "weighted" (metric-learn: NaN);
    * the local scale sigma_i is the distance to the k-th neighbour, as in Sugiyama's code;
      metric-learn reads a column of its partitioned distance matrix instead (``[:, k]``
      where ``[k, :]`` is meant), so each of its sigma_i is some distance from row k;
    * the between-class scatter is the local mixture scatter minus ``S_w``, as in the paper;
      metric-learn adds ``S_w``;
    * directions in which the data do not vary (constant or dependent features, as in
      digits) are left out and get zero components, and a perfectly separating direction
      gets a tiny ridge; metric-learn falls back to a general eigensolver there and can
      return complex or NaN components.

    fastdr's result matches Sugiyama's pairwise definition of both scatter matrices to
    round-off (``tests/reference/learners.py``).

    References
    ----------
    M. Sugiyama, "Dimensionality reduction of multimodal labeled data by local Fisher
    discriminant analysis", JMLR 8, 2007.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from fastdr.metric_learning import LFDA
    >>> X, y = load_iris(return_X_y=True)
    >>> LFDA(k=2, n_components=2).fit(X, y).transform(X).shape
    (150, 2)
    """

    _parameter_constraints = {
        "n_components": METRIC_LEARN_N_COMPONENTS,
        "k": [Interval(Integral, 1, None, closed="left"), None],
        "embedding_type": [StrOptions({"weighted", "orthonormalized", "plain"})],
        "preprocessor": ["array-like", callable, None],
    }

    def __init__(self, n_components=None, k=None, embedding_type="weighted",
                 preprocessor=None):
        self.n_components = n_components
        self.k = k
        self.embedding_type = embedding_type
        self.preprocessor = preprocessor

    def _fastdr_tags(self):
        # fit needs y (class labels), as metric-learn's learner does
        return {"target_tags.required": True}

    def fit(self, X, y):
        """Learn the map from labelled points.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples,) of int with a
            preprocessor. At least 2 rows.
        y : array-like of shape (n_samples,)
            Class labels (two classes or more).

        Returns
        -------
        self
        """
        validate_params(self)
        X, _, codes = check_labelled_data(fit_points(self, X), y, "LFDA")
        n, d = X.shape
        dim = metric_learn_n_components(self.n_components, d, "LFDA")
        k = self._neighbour_rank(d)

        Xf = np.asarray(X, dtype=np.float64)
        Xf = Xf - Xf.mean(axis=0)
        total = np.zeros(d)
        Sb = np.zeros((d, d))
        Sw = np.zeros((d, d))
        for c in range(int(codes.max()) + 1):
            Xc = Xf[codes == c]
            nc = Xc.shape[0]
            G = class_scatter(Xc, min(k, nc - 1))
            s = Xc.sum(axis=0)
            total += s
            Sb += G / n + (1.0 - nc / n) * (Xc.T @ Xc) + np.outer(s, s) / n
            Sw += G / nc
        # Sugiyama's S_b = local mixture scatter - S_w (metric-learn 0.7 adds S_w instead)
        Sb -= np.outer(total, total) / n + Sw
        values, vectors = _generalised_top(0.5 * (Sb + Sb.T), 0.5 * (Sw + Sw.T), Xf, dim)
        if self.embedding_type == "weighted":
            vectors = vectors * np.sqrt(np.maximum(values, 0.0))
        elif self.embedding_type == "orthonormalized":
            kept = np.any(vectors != 0, axis=0)  # components past the data's rank stay 0
            vectors[:, kept] = np.linalg.qr(vectors[:, kept])[0]
        flip = np.sign(vectors[np.abs(vectors).argmax(axis=0), np.arange(dim)])
        vectors = vectors * np.where(flip == 0, 1.0, flip)
        self.components_ = np.ascontiguousarray(vectors.T)
        self.n_features_in_ = d
        return self

    def _neighbour_rank(self, d):
        if self.k is None:
            # metric-learn's min(7, d - 1), but at least 1: k = 0 makes every local scale
            # the distance to the point itself, 0, and every affinity 0
            return max(min(7, d - 1), 1)
        if self.k >= d and d > 1:
            warnings.warn(
                f"LFDA: k={self.k} is not below n_features={d}; using k={d - 1} "
                "(metric-learn's rule).", UserWarning, stacklevel=3,
            )
            return d - 1
        return int(self.k)
