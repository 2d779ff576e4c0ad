"""metric-learn's ``preprocessor``: points and tuples given as indices into a dataset.

A learner built with ``preprocessor=X_all`` (an array) or ``preprocessor=f`` (a callable
from an int array of indices to the rows they stand for) accepts, wherever it takes points,
a 1-D array of indices, and wherever it takes pairs, an (n_pairs, 2) array of indices. The
indices are checked here, in Python, before any row is read: numba and numpy fancy indexing
on a bad index would fail far from the cause (or, in a kernel, read foreign memory).
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
    """Rows for a 1-D array of indices, from an array or a callable preprocessor."""
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise ValueError(
            f"With a preprocessor, {what} must be integer indices into the preprocessor's "
            f"data; got dtype {idx.dtype}. Pass int indices, or formed points without a "
            "preprocessor."
        )
    if isinstance(preprocessor, np.ndarray):
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
            "preprocessor takes a 1-D int array of indices and returns one row per index."
        ) from exc
    rows = check_array(rows, name=f"the preprocessor's output for {what}")
    if rows.shape[0] != idx.shape[0]:
        raise ValueError(
            f"The preprocessor returned {rows.shape[0]} rows for {idx.shape[0]} indices in "
            f"{what}; it must return one row per index."
        )
    return rows


def form_points(preprocessor, X, name="X", min_samples=1):
    """X as a validated 2-D float array: as given, or the preprocessor's rows for indices.

    Parameters
    ----------
    preprocessor : None, callable or ndarray
        The learner's ``preprocessor_``.
    X : array-like of shape (n_samples, n_features), or of shape (n_samples,) of int with
        a preprocessor.
    name : str
    min_samples : int

    Returns
    -------
    ndarray of shape (n_samples, n_features)
    """
    ndim = input_ndim(X)
    if preprocessor is not None and ndim == 1:
        X = _apply(preprocessor, X, name)
    elif ndim == 1:
        raise ValueError(
            f"{name} is 1-D: a 2-D array of points (n_samples, n_features) is expected. "
            "Reshape it (X.reshape(-1, 1) for one feature, X.reshape(1, -1) for one point), "
            "or build the learner with a preprocessor to pass indices."
        )
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


def form_pairs(preprocessor, pairs, name="pairs"):
    """Pairs as a validated (n_pairs, 2, n_features) float array (:func:`form_tuples`)."""
    return form_tuples(preprocessor, pairs, 2, name)


#: what a tuple of each size is called in the messages
TUPLE_NAMES = {2: "pair", 3: "triplet", 4: "quadruplet"}


def form_tuples(preprocessor, tuples, size, name="pairs"):
    """Tuples of points as a validated (n_tuples, size, n_features) float array.

    Parameters
    ----------
    preprocessor : None, callable or ndarray
        The learner's ``preprocessor_``.
    tuples : array-like of shape (n_tuples, size, n_features), or of shape (n_tuples, size)
        of int with a preprocessor.
    size : {2, 3, 4}
        Points per tuple: pairs, triplets or quadruplets.
    name : str

    Returns
    -------
    ndarray of shape (n_tuples, size, n_features)
    """
    kind = TUPLE_NAMES[size]
    ndim = input_ndim(tuples)
    if ndim == 2 and preprocessor is not None:
        idx = np.asarray(tuples)
        if idx.shape[1] != size:
            raise ValueError(
                f"{name} must have {size} columns (one index per point of a {kind}); got "
                f"shape {idx.shape}."
            )
        tuples = np.stack([_apply(preprocessor, idx[:, j], name) for j in range(size)],
                          axis=1)
    elif ndim != 3:
        hint = ("" if preprocessor is not None else
                f", or build the learner with a preprocessor to pass (n_{kind}s, {size}) "
                "indices")
        raise ValueError(
            f"{name} must be a 3-D array of formed {kind}s (n_{kind}s, {size}, n_features); "
            f"got a {ndim}-D array. Stack each {kind}'s {size} points{hint}."
        )
    T = check_array(tuples, name=name, ensure_2d=False)
    if T.ndim != 3 or T.shape[1] != size or T.shape[2] < 1:
        raise ValueError(
            f"{name} must have shape (n_{kind}s, {size}, n_features); got shape {T.shape}."
        )
    return T
