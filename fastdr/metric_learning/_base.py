"""What every Mahalanobis metric shares: ``M = P^T P``, ``transform``, ``pairwise``, and
the parameter and input checks of the learners."""

import warnings
from numbers import Integral, Real

import numpy as np

from .._base import TransformerMixin
from .._distance.metric import apply_linear_map
from .._eigen import spectral_pairs
from .._validation.arrays import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_query,
    check_X_y,
)
from .._validation.magnitudes import check_distance_magnitude
from .._validation.params import N_JOBS, Interval, Satisfies
from ._tuples import form_pairs, form_points, input_ndim, resolve_preprocessor

#: the parameter constraint of a metric-learn parameter kept under an old name: its
#: placeholder default, or a new value (which the learner warns about)
DEPRECATED = Satisfies(lambda v: isinstance(v, str) and v == "deprecated", '"deprecated"')


def renamed(learner, old, new):
    """The value of parameter ``new``, or of its old name ``old`` when that is set (with
    metric-learn's FutureWarning; the old names were renamed in metric-learn 0.6.3)."""
    value = getattr(learner, old)
    if isinstance(value, str) and value == "deprecated":
        return getattr(learner, new)
    warnings.warn(f'"{old}" was renamed "{new}" (metric-learn 0.6.3); pass {new}.',
                  FutureWarning, stacklevel=3)
    return value


#: metric-learn's ``n_components``: any int or None when the learner is built, checked at fit
#: against the data by :func:`metric_learn_n_components` (metric-learn's one message for 0,
#: negatives and too many alike)
METRIC_LEARN_N_COMPONENTS = [Integral, None]


def metric_learn_n_components(n_components, d, estimator, why="the map has at most one row "
                              "per feature"):
    """metric-learn's rule for ``n_components`` on data of d features: None means d.

    Parameters
    ----------
    n_components : int or None
    d : int
        Features of the training data.
    estimator : str
        The learner's name, for the note.
    why : str
        Why d is the limit, for the note.

    Returns
    -------
    int
        The number of rows of the map.

    Raises
    ------
    ValueError
        metric-learn's message (its tests compare it for equality), with fastdr's reason and
        remedy as a note (PEP 678: shown by the traceback, not part of ``str``).
    """
    if n_components is None:
        return d
    if 0 < n_components <= d:
        return int(n_components)
    error = ValueError(f"Invalid n_components, must be in [1, {d}]")
    error.add_note(f"{estimator}: n_components={n_components} is outside 1 .. n_features = "
                   f"{d} ({why}). Pass an int from 1 to {d}, or None for {d}.")
    raise error


#: Parameters that NCA and MMC share, with their constraints (see ``validate_params``).
LEARNER_CONSTRAINTS = {
    "n_components": [Interval(Integral, 1, None, closed="left"), None],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "random_state": ["random_state"],
    "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    "n_jobs": N_JOBS,
}


class MahalanobisMixin(TransformerMixin):
    """A metric ``d(x, y) = sqrt((x - y)^T M (x - y))`` with ``M = P^T P``.

    The class defines ``components_`` (P, of shape (r, d)); ``transform`` maps X to
    ``X P^T``, so Euclidean geometry on the transformed data is the Mahalanobis geometry on
    X. Any fitted instance plugs into fastdr's neighbours as ``metric=instance``.
    """

    #: whether ``fit`` saw X (and so recorded its column names); Mahalanobis needs no fit
    _fit_saw_X = True

    def _check_preprocessor(self):
        """Resolve the ``preprocessor`` parameter into ``preprocessor_`` (metric-learn's
        private step of the same name, which its tests call before querying an unfitted
        learner; ``fit`` does the same)."""
        self.preprocessor_ = resolve_preprocessor(getattr(self, "preprocessor", None))

    def _check_query(self, X, method, name="X"):
        preprocessor = getattr(self, "preprocessor_", None)
        if input_ndim(X) != 2 and hasattr(self, "preprocessor"):
            # metric-learn's learners: indicators through the preprocessor, or metric-learn's
            # error for the shape (which suggests a preprocessor: so only where there is one)
            arr = form_points(preprocessor, X, name=name, estimator=self)
            check_n_features(self, arr, method)
            return arr
        if self._fit_saw_X:
            return check_query(self, X, method, name=name)
        arr = check_array(X, name=name)
        check_n_features(self, arr, method)
        return arr

    def get_mahalanobis_matrix(self):
        """The Mahalanobis matrix ``M = P^T P``.

        Returns
        -------
        ndarray of shape (n_features, n_features)
            Symmetric positive semidefinite, float64.
        """
        check_is_fitted(self, "components_")
        P = np.asarray(self.components_, dtype=np.float64)
        return P.T @ P

    def transform(self, X):
        """Map X into the metric space: ``X P^T``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, r)
            In X's dtype (float32 stays float32); r is the number of rows of
            ``components_``.
        """
        check_is_fitted(self, "components_")
        X_arr = self._check_query(X, "transform")
        return apply_linear_map(X_arr, self.components_)

    def pairwise(self, X, Y=None, *, n_jobs=None):
        """Mahalanobis distances between the rows of X and of Y (or of X).

        Parameters
        ----------
        X : array-like of shape (m, n_features)
        Y : array-like of shape (n, n_features) or None
        n_jobs : int or None
            Threads for this call only.

        Returns
        -------
        ndarray of shape (m, n)
            In X's dtype; exactly 0 on the diagonal when Y is None.

        Raises
        ------
        fastdr.MemoryBudgetError
            When the m x n result would not fit in the memory budget.
        """
        from ..pairwise import pairwise_distances

        check_is_fitted(self, "components_")
        X_arr = self._check_query(X, "pairwise")
        if Y is not None:
            Y = self._check_query(Y, "pairwise", name="Y")
        return pairwise_distances(X_arr, Y, metric=self, n_jobs=n_jobs)

    def pair_distance(self, pairs):
        """The Mahalanobis distance between the two points of each pair.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2) of int
            The pairs, each as its two points; with a ``preprocessor``, each as two indices.

        Returns
        -------
        ndarray of shape (n_pairs,)
            ``||P (x - y)||``, float64. The difference is taken before the map, so that
            near points far from the origin lose no digits.
        """
        # metric-learn's order: a learner with a preprocessor must have resolved it (fit, or
        # _check_preprocessor), then the pairs' shape is checked, then the fit; its tests
        # expect the shape error from a learner whose preprocessor alone is resolved
        if hasattr(self, "preprocessor"):
            check_is_fitted(self, "preprocessor_")
        else:
            check_is_fitted(self, "components_")
        preprocessor = getattr(self, "preprocessor_", None)
        P = form_pairs(preprocessor, pairs, estimator=self)
        check_is_fitted(self, "components_")
        check_n_features(self, P[:, 0], "pair_distance")
        check_distance_magnitude(P.reshape(-1, P.shape[2]), "pairs")
        diff = np.asarray(P[:, 0] - P[:, 1], dtype=np.float64)
        mapped = diff @ np.asarray(self.components_, dtype=np.float64).T
        return np.sqrt(np.einsum("ij,ij->i", mapped, mapped))

    def pair_score(self, pairs):
        """The similarity of each pair: minus its distance (larger is more similar).

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2) of int

        Returns
        -------
        ndarray of shape (n_pairs,)
        """
        return -self.pair_distance(pairs)

    def score_pairs(self, pairs):
        """Deprecated alias of :meth:`pair_distance`, as in metric-learn 0.7.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2) of int

        Returns
        -------
        ndarray of shape (n_pairs,)
        """
        # metric-learn's text, word for word ("pair_distances" included): its tests compare
        # the warning by equality
        warnings.warn(
            "score_pairs will be deprecated in release 0.7.0. Use pair_score to compute "
            "similarity scores, or pair_distances to compute distances.",
            FutureWarning, stacklevel=2,
        )
        return self.pair_distance(pairs)

    def get_metric(self):
        """A plain function ``metric(u, v, squared=False)`` of two points.

        Each point is 1-D, or what scipy's distance functions also take (a single row, a
        scalar for one feature). The function holds a copy of ``components_``: refitting the
        learner does not change it. It works as a callable ``metric`` in scikit-learn and in
        fastdr (where passing the learner itself, ``metric=learner``, is much faster: it runs
        compiled).

        Returns
        -------
        callable
        """
        check_is_fitted(self, "components_")
        # a 1-D components_ (d,) is one row: the map to one dimension, as metric-learn's
        # ``(u - v).dot(components_.T)`` reads it
        P = np.atleast_2d(np.array(self.components_, dtype=np.float64))

        def metric(u, v, squared=False):
            u = _point(u, P.shape[1])
            v = _point(v, P.shape[1])
            mapped = P @ (u - v)
            dist = float(mapped @ mapped)
            if not np.isfinite(dist):
                raise ValueError(
                    "The squared distance between u and v overflows float64 (their entries "
                    f"reach {max(np.abs(u).max(), np.abs(v).max()):.3g}). Rescale the data."
                )
            return dist if squared else float(np.sqrt(dist))

        return metric


def _point(u, d):
    """One point of ``get_metric``'s function as a 1-D float64 array of d entries.

    Whatever scipy's distance functions accept (``scipy.spatial.distance._validate_vector``)
    is accepted: a 1-D array or list, a row ``(1, d)`` or any shape with one non-trivial axis
    (squeezed), a scalar (one feature); so the function is a drop-in ``metric`` wherever
    scipy's are. Other shapes, and a wrong feature count, are refused.
    """
    arr = np.asarray(u, dtype=np.float64)
    if arr.ndim != 1:
        arr = np.atleast_1d(arr.squeeze())
    if arr.ndim != 1 or arr.shape[0] != d:
        raise ValueError(
            f"metric takes two points of {d} features (1-D, or a single row); got shape "
            f"{np.shape(u)}."
        )
    return arr


def check_labelled_data(X, y, learner, needs="", min_classes=2):
    """The input checks every supervised metric learner shares.

    X must be finite, of at least two rows, with values small enough for squared distances;
    y must hold at least ``min_classes`` classes.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    learner : str
        The learner's name, for the messages.
    needs : str
        Why two classes are needed, appended to "needs at least 2 classes".
    min_classes : {1, 2}
        1 where one class is a valid (if trivial) problem: NCA's objective is then constant
        and its fit returns the initial map, as scikit-learn's does.

    Returns
    -------
    X : ndarray
    classes : ndarray
        Sorted class labels.
    codes : ndarray of int64
        Each row's index into ``classes``.
    """
    X, y = check_X_y(X, y, min_samples=2)
    check_distance_magnitude(X)
    classes, codes = check_classification_targets(y, min_classes=1)
    if classes.shape[0] < min_classes:
        raise ValueError(
            f"{learner} needs at least 2 classes{needs}; y has a single class "
            f"({classes[0].tolist()!r}). "
            "Pass labels of two or more classes."
        )
    return X, classes, codes


def components_from_psd(M, n_components=None):
    """Factor a symmetric PSD matrix as ``M = P^T P`` with P's rows by decreasing weight.

    Parameters
    ----------
    M : ndarray of shape (d, d)
        Symmetric positive semidefinite (negative round-off eigenvalues are clipped).
    n_components : int or None
        Keep the top ``n_components`` rows (the best rank-r approximation of M); None keeps
        all d rows, zero rows included, so ``transform`` always returns d columns.

    Returns
    -------
    ndarray of shape (r, d)
        Row k is ``sqrt(lambda_k) v_k^T``; each eigenvector's largest entry is positive.
    """
    # the whole spectrum, then the top rows: a truncated M gets the same rows as the full
    # one even where eigenvalues are round-off (a subset solve would differ there)
    values, vectors = spectral_pairs(0.5 * (M + M.T), None, solver="dense",
                                     what="The Mahalanobis matrix M", psd=True)
    values, vectors = values[:n_components], vectors[:, :n_components]
    return np.ascontiguousarray(np.sqrt(values)[:, None] * vectors.T)


def components_from_metric(M):
    """metric-learn's factor of M: ``L`` with ``L^T L = M``, by the same rule.

    A diagonal M gives ``sqrt(diag(M))``; otherwise the Cholesky factor's transpose (upper
    triangular); when M is only semidefinite, ``sqrt(w) V^T`` from ``M = V diag(w) V^T``
    (eigenvalues below zero by round-off are clipped). The same rule as metric-learn's
    ``components_from_metric``, so that ``components_`` and ``transform`` give the same
    numbers, not only the same distances.

    Parameters
    ----------
    M : ndarray of shape (d, d)
        Symmetric positive semidefinite.

    Returns
    -------
    ndarray of shape (d, d)
    """
    M = np.asarray(M, dtype=np.float64)
    if np.array_equal(M, np.diag(np.diag(M))):
        return np.diag(np.sqrt(np.maximum(np.diag(M), 0.0)))
    try:
        return np.linalg.cholesky(M).T
    except np.linalg.LinAlgError:
        values, vectors = np.linalg.eigh(0.5 * (M + M.T))
        return vectors.T * np.sqrt(np.maximum(values, 0.0))[:, None]


def data_span(Xc):
    """An orthonormal basis of the span of centred rows: the directions the data vary in.

    Each feature is scaled by its largest magnitude before the rank is judged, so that a
    feature 1e8 times larger than the others does not push them under the threshold; a
    feature exactly constant (0 once centred) gets exactly zero weight.

    Parameters
    ----------
    Xc : ndarray of shape (n, d)
        Centred rows.

    Returns
    -------
    ndarray of shape (d, r)
        Orthonormal columns; the first r columns of the identity (on the varying features)
        when those features are linearly independent, so that a full span changes nothing.
    """
    d = Xc.shape[1]
    live = np.flatnonzero(np.any(Xc != 0, axis=0))
    if live.size == 0:
        return np.zeros((d, 0))
    scale = np.abs(Xc[:, live]).max(axis=0)
    scaled = Xc[:, live] / scale
    values, vectors = np.linalg.eigh(scaled.T @ scaled)
    kept = values > values.max() * live.size * np.finfo(np.float64).eps
    U = np.zeros((d, int(kept.sum())))
    if kept.all():
        U[live, np.arange(live.size)] = 1.0
    else:
        U[live] = np.linalg.qr(scale[:, None] * vectors[:, kept])[0]
    return U


def project_psd(M):
    """Nearest symmetric positive semidefinite matrix in Frobenius norm (eigh, clip).

    Parameters
    ----------
    M : ndarray of shape (d, d)

    Returns
    -------
    ndarray of shape (d, d)
        ``V max(Lambda, 0) V^T`` for the eigendecomposition of ``(M + M^T) / 2``; exactly
        symmetric.
    """
    values, vectors = np.linalg.eigh(0.5 * (M + M.T))
    positive = values > 0
    V = vectors[:, positive]
    out = (V * values[positive]) @ V.T
    return 0.5 * (out + out.T)
