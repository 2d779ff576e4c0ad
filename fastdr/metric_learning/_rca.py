"""``RCA`` and ``RCA_Supervised``: relevant component analysis from chunklets (Bar-Hillel et
al., 2005), metric-learn's interface.

A chunklet is a set of points known to share a class. RCA whitens the within-chunklet
covariance C: ``M = C^{-1}``, so that directions along which chunklets vary (irrelevant to
the class) shrink. With fewer components than features it first keeps the directions where
C is smallest relative to the total covariance (Fisher's criterion).
"""

from numbers import Integral

import numpy as np
from scipy.linalg import eigh

from .._base import BaseEstimator
from .._validation.params import (
    Interval,
    check_random_state,
    validate_params,
)
from ._base import (
    DEPRECATED,
    METRIC_LEARN_N_COMPONENTS,
    MahalanobisMixin,
    data_span,
    metric_learn_n_components,
    renamed,
)
from ._constraints import _integers, partial_label_codes
from ._covariance import data_covariance
from ._tuples import fit_points


def check_chunks(chunks, n_samples):
    """Validate chunklet labels: one int per row, -1 for "in no chunklet"; return int64."""
    arr = np.asarray(chunks)
    if arr.ndim != 1 or arr.shape[0] != n_samples:
        raise ValueError(
            f"chunks must hold one chunklet label per row of X: expected shape "
            f"({n_samples},), got {arr.shape}."
        )
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind != "f" or not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(
                f"chunks must hold integer chunklet labels (-1 for none); got dtype "
                f"{arr.dtype}."
            )
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < -1:
        raise ValueError(
            f"chunks holds the label {int(arr.min())}: chunklet labels are >= 0, and -1 "
            "marks a row in no chunklet."
        )
    return arr


def within_chunklet_covariance(X, chunks):
    """C: the covariance of the chunked rows, each centred on its chunklet's mean.

    Parameters
    ----------
    X : ndarray of shape (n_samples, d)
    chunks : ndarray of shape (n_samples,) of int64, -1 for none

    Returns
    -------
    C : ndarray of shape (d, d)
        ``sum_j sum_{i in j} (x_i - mean_j)(x_i - mean_j)^T / n_chunked`` (metric-learn's
        ``np.cov(..., bias=1)`` of the centred rows, whose mean is 0).
    chunked : ndarray of bool
        Which rows are in a chunklet.
    """
    chunked = chunks >= 0
    if not chunked.any():
        raise ValueError(
            "chunks marks no row as in a chunklet (all -1): RCA needs at least one chunklet "
            "of two or more points."
        )
    Xc = np.asarray(X[chunked], dtype=np.float64)
    labels = chunks[chunked]
    _, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    means = np.zeros((counts.shape[0], Xc.shape[1]))
    np.add.at(means, inverse, Xc)
    means /= counts[:, None]
    centred = Xc - means[inverse]
    centred -= centred.mean(axis=0)  # 0 up to round-off; np.cov removes it too
    C = (centred.T @ centred) / centred.shape[0]
    return 0.5 * (C + C.T), chunked


def _inverse_sqrt(C, what):
    """L with ``L^T L = C^{-1}``: metric-learn's symmetric ``C^{-1/2}`` where C's condition
    number is below 1e10, else ``Lambda^{-1/2} V^T S^{-1}`` from the correlation
    ``S^{-1} C S^{-1}`` (S the standard deviations), whose small eigenvalues keep their
    digits. The rank is judged on the correlation, so that a feature 1e8 times larger than the
    others cannot hide them."""
    n = C.shape[0]
    std = np.sqrt(np.maximum(np.diag(C), 0.0))
    std = np.where(std > 0, std, 1.0)
    values, vectors = np.linalg.eigh(C / std[:, None] / std[None, :])
    tol = values.max(initial=0.0) * n * np.finfo(np.float64).eps
    if values.min() <= tol:
        rank = int(np.sum(values > tol))
        raise ValueError(
            f"RCA's {what} has rank {rank} < {n}, the dimension the chunked rows "
            "span, so it has no inverse (metric-learn returns NaN here). Use more or larger "
            "chunklets (their sizes minus one must add up to at least "
            f"{n}), or reduce X to at most {rank} dimensions first (for example "
            "with PCA)."
        )
    plain_values, plain_vectors = np.linalg.eigh(C)
    if plain_values.min() > 1e-10 * plain_values.max():
        # condition below 1e10: the plain eigenvalues keep at least 6 digits
        return (plain_vectors / np.sqrt(plain_values)) @ plain_vectors.T
    return (vectors / np.sqrt(values)).T / std[None, :]


def _rca_components(C, X_chunked, dim):
    """RCA's map, within the span of the chunked rows (zero outside it).

    Directions in which the chunked rows do not vary at all (a constant feature) carry no
    information: the problem is solved in the span (U, from the total covariance T) and
    mapped back. With all components: ``U (U^T C U)^{-1/2} U^T``, which is ``C^{-1/2}``
    when the span is everything (metric-learn's answer). With fewer: the ``dim`` directions
    of smallest ``v^T C v / v^T T v`` (A), then ``(A^T C A)^{-1/2} A^T``.
    """
    d = C.shape[0]
    T = data_covariance(X_chunked) if X_chunked.shape[0] > 1 else np.zeros((d, d))
    # a full span keeps the identity basis: then the answer is metric-learn's to round-off
    U = data_span(X_chunked - X_chunked.mean(axis=0))
    r = U.shape[1]
    if r == 0:
        raise ValueError(
            "The chunked rows of X are all equal: RCA has no direction to learn. Pass "
            "chunklets of distinct points."
        )
    C_r = U.T @ C @ U
    C_r = 0.5 * (C_r + C_r.T)
    # both maps need C's inverse on the span: check it once, with the span's numbers
    C_sqrt_inv = _inverse_sqrt(C_r, "within-chunklet covariance")
    if dim >= d:
        return U @ C_sqrt_inv @ U.T
    top = min(dim, r)
    T_r = U.T @ T @ U
    _, a = eigh(C_r, 0.5 * (T_r + T_r.T), subset_by_index=(0, top - 1))
    A = U @ a
    inner = A.T @ C @ A
    out = np.zeros((dim, d))
    out[:top] = _inverse_sqrt(0.5 * (inner + inner.T), "within-chunklet covariance") @ A.T
    return out


class RCA(MahalanobisMixin, BaseEstimator):
    """Relevant component analysis: whiten the within-chunklet covariance.

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension of the map; None keeps n_features.
    preprocessor : array-like of shape (n_samples, n_features), callable or None, \
default=None
        With a preprocessor, X may be a 1-D array of indices into it.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        L with ``L^T L = M``. With all components, ``C^{-1/2}`` (symmetric), as
        metric-learn's.
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    Notes
    -----
    With fewer components than features, the directions are those of smallest
    ``v^T C v / v^T T v`` (T the total covariance of the chunked rows), solved as a symmetric
    generalised eigenproblem; metric-learn solves the same problem with a general
    (non-symmetric) eigensolver, so its ``components_`` differ from these by a rotation, and
    M is the same. A within-chunklet covariance without an inverse is an error naming the
    remedy; metric-learn warns and returns NaN.

    References
    ----------
    A. Bar-Hillel, T. Hertz, N. Shental and D. Weinshall, "Learning a Mahalanobis metric from
    equivalence constraints", JMLR 6, 2005.
    """

    _parameter_constraints = {
        "n_components": METRIC_LEARN_N_COMPONENTS,
        "preprocessor": ["array-like", callable, None],
    }

    def __init__(self, n_components=None, preprocessor=None):
        self.n_components = n_components
        self.preprocessor = preprocessor

    def _fastdr_tags(self):
        # fit needs y (chunklet labels), as metric-learn's learner does
        return {"target_tags.required": True}

    def fit(self, X, chunks):
        """Learn M from chunklets.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples,) of int with a
            preprocessor. At least 2 rows.
        chunks : array-like of shape (n_samples,) of int
            ``chunks[i] = j`` puts row i in chunklet j (j >= 0); -1 puts it in none.

        Returns
        -------
        self
        """
        validate_params(self)
        return self._fit_chunks(fit_points(self, X), chunks)

    def _fit_chunks(self, X, chunks):
        """Learn M from formed points X and chunklet labels."""
        d = X.shape[1]
        dim = metric_learn_n_components(self.n_components, d, type(self).__name__)
        if chunks is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y "
                             "is None: pass the chunklet labels.")
        chunks = check_chunks(chunks, X.shape[0])
        C, chunked = within_chunklet_covariance(X, chunks)
        self.components_ = _rca_components(C, X[chunked], dim)
        self.components_ = np.ascontiguousarray(self.components_)
        self.n_features_in_ = d
        return self


def draw_chunklets(codes, n_chunks, chunk_size, rng):
    """Draw ``n_chunks`` disjoint chunklets of ``chunk_size`` rows of one class each.

    Each chunklet picks a class uniformly among those with ``chunk_size`` rows left, then
    that many of its remaining rows at random. (metric-learn's draw never picks the last
    class: its ``randint`` bound is exclusive.)

    Returns
    -------
    ndarray of shape (n_samples,) of int64
        The chunklet label of each row, -1 for none.
    """
    members = [rng.permutation(np.flatnonzero(codes == c)) for c in range(codes.max() + 1)]
    capacity = sum(len(m) // chunk_size for m in members)
    if capacity < n_chunks:
        raise ValueError(
            f"Not enough rows for {n_chunks} chunklets of {chunk_size}: the classes hold at "
            f"most {capacity}. Pass n_chunks <= {capacity} or a smaller chunk_size."
        )
    used = np.zeros(len(members), dtype=np.int64)
    chunks = np.full(codes.shape[0], -1, dtype=np.int64)
    for j in range(n_chunks):
        open_ = [c for c, m in enumerate(members) if len(m) - used[c] >= chunk_size]
        c = open_[int(_integers(rng, 0, len(open_), 1)[0])]
        chunks[members[c][used[c]:used[c] + chunk_size]] = j
        used[c] += chunk_size
    return chunks


class RCA_Supervised(RCA):
    """RCA with chunklets drawn from class labels.

    Parameters
    ----------
    n_components : int or None, default=None
        Dimension of the map; None keeps n_features.
    n_chunks : int, default=100
        Number of chunklets to draw.
    chunk_size : int, default=2
        Rows per chunklet (at least 2: a chunklet of one point has no spread).
    preprocessor : array-like, callable or None, default=None
        As in :class:`RCA`.
    random_state : int, RandomState instance or None, default=None
        Seeds the draw of the chunklets.
    num_chunks : int or "deprecated", default="deprecated"
        metric-learn's old name of ``n_chunks``: a value other than "deprecated" replaces
        ``n_chunks``, with a FutureWarning.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
    chunks_ : ndarray of shape (n_samples,) of int64
        The drawn chunklet label of each row (-1 for none).
    preprocessor_ : None, callable or ndarray
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from fastdr.metric_learning import RCA_Supervised
    >>> X, y = load_iris(return_X_y=True)
    >>> RCA_Supervised(n_chunks=30, chunk_size=2, random_state=0).fit(X, y).transform(X).shape
    (150, 4)
    """

    _TINY = ("its data (10 or 20 rows) hold fewer disjoint chunklets than n_chunks: fit "
             "raises a ValueError naming the most n_chunks the classes allow")
    _sklearn_check_exemptions = {
        "check_fit2d_1feature": _TINY,
        "check_estimators_nan_inf": _TINY,
        "check_n_features_in_after_fitting": _TINY,
    }
    _parameter_constraints = {
        **RCA._parameter_constraints,
        "n_chunks": [Interval(Integral, 1, None, closed="left")],
        "chunk_size": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
        "num_chunks": [DEPRECATED, Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_components=None, n_chunks=100, chunk_size=2, preprocessor=None,
                 random_state=None, num_chunks="deprecated"):
        super().__init__(n_components=n_components, preprocessor=preprocessor)
        self.n_chunks = n_chunks
        self.chunk_size = chunk_size
        self.random_state = random_state
        self.num_chunks = num_chunks

    def fit(self, X, y):
        """Draw chunklets from the labels and learn M.

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
        n_chunks = renamed(self, "num_chunks", "n_chunks")
        X = fit_points(self, X)
        n = X.shape[0]
        if y is None:
            raise ValueError("RCA_Supervised requires y to be passed, but the target y is None.")
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != n:
            raise ValueError(
                f"y must hold one label per row of X: expected shape ({n},), got {y.shape}."
            )
        _, codes = partial_label_codes(y)  # negative labels: unlabelled, as in metric-learn
        rng = check_random_state(self.random_state)
        chunks = draw_chunklets(codes, n_chunks, self.chunk_size, rng)
        self._fit_chunks(X, chunks)
        self.chunks_ = chunks
        return self
