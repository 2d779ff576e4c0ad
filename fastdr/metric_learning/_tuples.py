"""metric-learn's ``preprocessor``: points and tuples given as indices into a dataset.

A learner built with ``preprocessor=X_all`` (an array) or ``preprocessor=f`` (a callable
from a 1-D array of indicators, such as indices, ids or file names, to the rows they stand
for) accepts, wherever it takes points, a 1-D array of indicators, and wherever it takes
pairs, an (n_pairs, 2) array of them. Indices into an array preprocessor are checked here, in
Python, before any row is read: numba and numpy fancy indexing on a bad index would fail far
from the cause (or, in a kernel, read foreign memory).

The errors for input of the wrong shape carry metric-learn's messages word for word (its
tests compare them by equality), with fastdr's remedy as a PEP 678 note.
"""

import numpy as np

from .._validation.arrays import check_array
from .._validation.feature_names import record_feature_names
from .._validation.magnitudes import check_distance_magnitude


def input_ndim(X):
    """The number of dimensions of an array-like, without numpy's array functions on it.

    ``np.ndim`` dispatches ``__array_function__``, which some array-likes refuse; a sparse
    matrix counts as 2-D (``check_array`` then refuses it with its own message).
    """
    if hasattr(X, "nnz") and hasattr(X, "shape"):
        return len(X.shape)
    shape = getattr(X, "shape", None)
    if isinstance(shape, tuple):
        return len(shape)
    return np.asarray(X).ndim


def estimator_context(estimator):
    """metric-learn's ``" by Name"`` for the messages: the estimator's class name (or the
    string given), or ``""`` without one."""
    if estimator is None:
        return ""
    return " by " + (estimator if isinstance(estimator, str) else type(estimator).__name__)


def input_error(X, expected, estimator=None, preprocessor=None, reshape_hint=False, note=None):
    """metric-learn's ValueError for input of the wrong number of dimensions.

    The text is metric-learn's ``make_error_input``, word for word: its tests compare the
    message by equality. fastdr's own remedy, when there is one, goes in a PEP 678 note:
    shown under the traceback, matched by ``pytest.raises(match=...)``, absent from
    ``str(error)``.

    Parameters
    ----------
    X : array-like
        The input, shown in the message.
    expected : {"points", "tuples"}
    estimator : estimator, str or None
        Named in the message (" by ITML").
    preprocessor : None, callable or ndarray
        With one, the message names the indicator form also accepted.
    reshape_hint : bool
        Add "and/or use a preprocessor" (metric-learn does so for a 1-D X of points and a
        2-D array of tuples, when no preprocessor is set).
    note : str or None
        fastdr's remedy, added as a note.

    Returns
    -------
    ValueError
        To raise.
    """
    shown = X if hasattr(X, "nnz") else np.asarray(X)
    formed = {"points": "2D array of formed points",
              "tuples": "3D array of formed tuples"}[expected]
    if preprocessor is not None:
        indicators = {"points": "1D array of indicators",
                      "tuples": "2D array of indicators"}[expected]
        formed = f"{indicators} or {formed}"
        when = " when using a preprocessor"
    else:
        when = ""
    hint = " and/or use a preprocessor" if reshape_hint else ""
    error = ValueError(f"{formed} expected{estimator_context(estimator)}{when}. Found "
                       f"{input_ndim(X)}D array instead:\ninput={shown}. Reshape your data"
                       f"{hint}.\n")
    if note:
        error.add_note(note)
    return error


def resolve_preprocessor(preprocessor):
    """The preprocessor a learner keeps as ``preprocessor_``: None, a callable, or an array.

    Parameters
    ----------
    preprocessor : None, callable or array-like of shape (n_samples, n_features)

    Returns
    -------
    None, callable or ndarray
        An array-like is validated once (finite, 2-D) and kept as an array.
    """
    if preprocessor is None or callable(preprocessor):
        return preprocessor
    return check_array(preprocessor, name="preprocessor")


def _apply(preprocessor, indices, what):
    """Rows for a 1-D array of indicators, from an array or a callable preprocessor.

    An array preprocessor takes integer indices into its rows, checked here. A callable
    receives the indicators as given: it defines what they are (ints, file names, ids), as
    in metric-learn, so only its output is checked.
    """
    idx = np.asarray(indices)
    if isinstance(preprocessor, np.ndarray):
        if idx.dtype.kind not in "iu":
            raise ValueError(
                f"With an array preprocessor, {what} must be integer indices into its rows; "
                f"got dtype {idx.dtype}. Pass int indices, a callable preprocessor that "
                "reads these indicators, or formed points without a preprocessor."
            )
        n = preprocessor.shape[0]
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            bad = int(idx.min()) if idx.min() < 0 else int(idx.max())
            raise ValueError(
                f"{what} holds the index {bad}, out of range for the preprocessor's {n} "
                f"rows; indices must lie in [0, {n - 1}]."
            )
        return preprocessor[idx]
    try:
        rows = preprocessor(idx)
    except Exception as exc:
        raise ValueError(
            f"The preprocessor raised {type(exc).__name__} on {what}: {exc}. A callable "
            "preprocessor takes a 1-D array of indicators and returns one row per indicator."
        ) from exc
    rows = check_array(rows, name=f"the preprocessor's output for {what}")
    if rows.shape[0] != idx.shape[0]:
        raise ValueError(
            f"The preprocessor returned {rows.shape[0]} rows for {idx.shape[0]} indices in "
            f"{what}; it must return one row per index."
        )
    return rows


def form_points(preprocessor, X, name="X", min_samples=1, estimator=None):
    """X as a validated 2-D float array: as given, or the preprocessor's rows for indicators.

    Parameters
    ----------
    preprocessor : None, callable or ndarray
        The learner's ``preprocessor_``.
    X : array-like of shape (n_samples, n_features), or of shape (n_samples,) of indicators
        with a preprocessor (int indices for an array preprocessor).
    name : str
    min_samples : int
    estimator : estimator or None
        Named in the messages, as metric-learn does (" by ITML").

    Returns
    -------
    ndarray of shape (n_samples, n_features)
    """
    ndim = input_ndim(X)
    if preprocessor is not None and ndim == 1:
        X = _apply(preprocessor, X, name)
    elif ndim == 1:
        raise input_error(
            X, "points", estimator, reshape_hint=True,
            note=f"{name} is 1-D: reshape it (X.reshape(-1, 1) for one feature, "
                 "X.reshape(1, -1) for one point), or build the learner with a preprocessor "
                 "to pass indices.")
    elif ndim != 2:
        raise input_error(X, "points", estimator, preprocessor)
    return check_array(X, name=name, min_samples=min_samples)


def fit_points(learner, X):
    """A learner's training points: the preprocessor resolved (``preprocessor_``), X's column
    names recorded, X formed (at least 2 rows) and its magnitudes checked.

    Parameters
    ----------
    learner : estimator with a ``preprocessor`` parameter
    X : array-like of shape (n_samples, n_features), or (n_samples,) of int with a
        preprocessor.

    Returns
    -------
    ndarray of shape (n_samples, n_features)
    """
    learner.preprocessor_ = resolve_preprocessor(learner.preprocessor)
    record_feature_names(learner, X)
    X = form_points(learner.preprocessor_, X, min_samples=2)
    check_distance_magnitude(X)
    check_spread(X)
    return X


def check_spread(X, name="X"):
    """Refuse rows that differ but whose squared differences all underflow to 0.

    The learners form squared distances; rows 1e-200 apart would all look identical (and
    every metric would come out 0 or the identity) without a word.
    """
    spread = X - X.mean(axis=0)
    if (spread != 0).any() and not (np.einsum("ij,ij->i", spread, spread) > 0).any():
        raise ValueError(
            f"The rows of {name} differ, but by so little (largest difference "
            f"{np.abs(spread).max():.3g}) that their squared distances underflow float64. "
            f"Rescale {name}, for example with StandardScaler."
        )


def form_pairs(preprocessor, pairs, name="pairs", estimator=None):
    """Pairs as a validated (n_pairs, 2, n_features) float array (:func:`form_tuples`)."""
    return form_tuples(preprocessor, pairs, 2, name, estimator=estimator)


#: what a tuple of each size is called in the messages
TUPLE_NAMES = {2: "pair", 3: "triplet", 4: "quadruplet"}


def form_tuples(preprocessor, tuples, size, name="pairs", estimator=None):
    """Tuples of points as a validated (n_tuples, size, n_features) float array.

    The messages for a wrong number of dimensions or of points per tuple are
    metric-learn's, word for word (its tests compare them by equality), with fastdr's
    remedy as a note.

    Parameters
    ----------
    preprocessor : None, callable or ndarray
        The learner's ``preprocessor_``.
    tuples : array-like of shape (n_tuples, size, n_features), or of shape (n_tuples, size)
        of indicators with a preprocessor (int indices for an array preprocessor).
    size : {2, 3, 4}
        Points per tuple: pairs, triplets or quadruplets.
    name : str
    estimator : estimator or None
        Named in the messages, as metric-learn does (" by ITML").

    Returns
    -------
    ndarray of shape (n_tuples, size, n_features)
    """
    kind = TUPLE_NAMES[size]
    ndim = input_ndim(tuples)
    if ndim == 2 and preprocessor is not None:
        idx = np.asarray(tuples)
        if idx.shape[1] != size:
            raise _tuple_size_error(idx, size, name, estimator, indicators=True)
        tuples = np.stack([_apply(preprocessor, idx[:, j], name) for j in range(size)],
                          axis=1)
    elif ndim != 3:
        note = (f"{name} must be a 3-D array of formed {kind}s (n_{kind}s, {size}, "
                f"n_features): stack each {kind}'s {size} points"
                + ("." if preprocessor is not None else
                   f", or build the learner with a preprocessor to pass (n_{kind}s, {size}) "
                   "indices."))
        raise input_error(tuples, "tuples", estimator, preprocessor,
                          reshape_hint=ndim == 2 and preprocessor is None, note=note)
    T = check_array(tuples, name=name, ensure_2d=False)
    if T.ndim != 3 or T.shape[2] < 1:
        raise ValueError(
            f"{name} must have shape (n_{kind}s, {size}, n_features); got shape {T.shape}."
        )
    if T.shape[1] != size:
        raise _tuple_size_error(tuples, size, name, estimator)
    return T


def _tuple_size_error(tuples, size, name, estimator, indicators=False):
    """metric-learn's ValueError for tuples of the wrong number of points (its
    ``check_tuple_size`` message, word for word), with fastdr's remedy as a note; for
    ``indicators`` (an (n_tuples, k) array given to a preprocessor) the note names columns."""
    shown = np.asarray(tuples)
    kind = TUPLE_NAMES[size]
    error = ValueError(f"Tuples of {size} element(s) expected{estimator_context(estimator)}. "
                       f"Got tuples of {shown.shape[1]} element(s) instead "
                       f"(shape={shown.shape}):\ninput={shown}.\n")
    if indicators:
        error.add_note(f"{name} must have {size} columns (one indicator per point of a "
                       f"{kind}).")
    else:
        error.add_note(f"{name} must have shape (n_{kind}s, {size}, n_features): {size} "
                       f"points per {kind}.")
    return error
