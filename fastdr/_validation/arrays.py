"""Input and parameter checks shared by every public estimator and function.

All user-facing errors live in the public tier; kernels assume validated input. Every message
says what was expected, what was received, and what to do instead.
"""

import warnings

import numpy as np

from ..exceptions import DataConversionWarning, NotFittedError, compatible
from .feature_names import check_feature_names

FLOAT_DTYPES = (np.float64, np.float32)



def check_array(
    X,
    *,
    name="X",
    dtype="numeric",
    ensure_2d=True,
    min_samples=1,
    min_features=1,
    allow_nonfinite=False,
    copy=False,
    order="C",
):
    """Validate an array-like and return a float array.

    Parameters
    ----------
    X : array-like
        The input. Lists, int, bool and float16 arrays are converted to float64; float32 and
        float64 keep their dtype (``dtype="numeric"``).
    name : str
        How the input is called in error messages.
    dtype : {"numeric"} or numpy dtype
        ``"numeric"`` keeps float32/float64 and converts everything else to float64.
    ensure_2d : bool
        Require a 2-D array.
    min_samples, min_features : int
        Minimum number of rows and columns.
    allow_nonfinite : bool or "allow-nan"
        True accepts NaN and inf (only for inputs where they mean something, such as a
        graph); ``"allow-nan"`` accepts NaN but not inf (a metric that reads NaN as a
        missing value, such as ``"nan_euclidean"``), as scikit-learn's ``ensure_all_finite``.
    copy : bool
        Always return a new array.
    order : {"C", "F", None}
        Memory layout of the result.

    Returns
    -------
    ndarray
        A validated array (a copy only where conversion or ``copy`` requires it).
    """
    if hasattr(X, "toarray") and hasattr(X, "nnz"):
        raise TypeError(
            f"{name} is a sparse matrix; fastdr needs dense input here. Convert it with "
            f"{name + '.toarray()' if name.isidentifier() else 'its .toarray() method'}."
        )
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and other odd inputs
        raise ValueError(
            f"{name} could not be converted to an array: {exc} Pass a rectangular array of "
            "numbers: a numpy array, a DataFrame, or a list of rows of equal length."
        ) from None
    if arr.dtype.kind in "OUSV":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise type(exc)(
                f"{name} holds non-numeric values (dtype {arr.dtype}): {exc}. "
                "Pass an array of numbers."
            ) from None
    if arr.dtype.kind == "c":
        raise ValueError(
            f"Complex data not supported: {name} is complex (dtype {arr.dtype}). "
            f"Pass {name}.real or np.abs({name}) as appropriate."
        )
    if dtype == "numeric":
        target = arr.dtype if arr.dtype in FLOAT_DTYPES else np.float64
    else:
        target = np.dtype(dtype)
    if ensure_2d:
        if arr.ndim == 0:
            raise ValueError(
                f"Expected a 2-D array for {name}, got a scalar. "
                "Reshape it to (n_samples, n_features)."
            )
        if arr.ndim == 1:
            raise ValueError(
                f"Expected a 2-D array for {name}, got a 1-D array of shape {arr.shape}. "
                f"Reshape your data with {name}.reshape(-1, 1) for a single feature or "
                f"{name}.reshape(1, -1) for a single sample."
            )
        if arr.ndim > 2:
            raise ValueError(
                f"Expected a 2-D array for {name}, got {arr.ndim} dimensions "
                f"(shape {arr.shape})."
            )
        if arr.shape[0] < min_samples:
            raise ValueError(
                f"{name} has {arr.shape[0]} sample(s) (shape {arr.shape}), but at least "
                f"{min_samples} {'is' if min_samples == 1 else 'are'} required."
            )
        if arr.shape[1] < min_features:
            raise ValueError(
                f"{name} has {arr.shape[1]} feature(s) (shape={arr.shape}) while a minimum of "
                f"{min_features} is required. Pass data with at least {min_features} column(s)."
            )
    elif arr.size < min_samples:
        raise ValueError(f"{name} is empty (shape {arr.shape}); pass at least one value.")
    arr = np.array(arr, dtype=target, order=order, copy=copy or None)
    if allow_nonfinite == "allow-nan":
        check_finite(arr, name, allow_nan=True)
    elif not allow_nonfinite:
        check_finite(arr, name)
    return arr



def check_finite(arr, name, allow_nan=False):
    """Raise a ValueError naming ``name`` when ``arr`` holds NaN or inf (only inf when
    ``allow_nan``)."""
    if allow_nan:
        if arr.dtype.kind == "f" and np.isinf(arr).any():
            raise ValueError(
                f"{name} contains infinity ({int(np.isinf(arr).sum())} inf). NaN marks a "
                "missing value here, but infinity has no distance: replace it (by NaN, to "
                "treat it as missing, or by a finite value) first.")
        return
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(np.isinf(arr).sum())
        raise ValueError(
            f"{name} contains NaN or infinity ({n_nan} NaN, {n_inf} inf). "
            "Remove or impute those values first, for example with "
            "sklearn.impute.SimpleImputer."
        )



def check_classification_targets(y, *, min_classes=2):
    """Reject continuous labels and fewer than ``min_classes`` classes; return the classes.

    Returns
    -------
    classes : ndarray
        Sorted unique labels.
    codes : ndarray of int64
        Each sample's index into ``classes``.
    """
    if y.dtype.kind == "f" and not np.all(np.mod(y, 1) == 0):
        raise ValueError(
            "Unknown label type: continuous. Class labels must be discrete (ints, strings or "
            "integral floats); for a continuous target use a regressor."
        )
    try:
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in np.asarray(y, dtype=object).ravel()})
        raise ValueError(
            f"y holds class labels that cannot be sorted against each other (types: "
            f"{', '.join(kinds)}); class labels must be of one sortable type. Convert them, "
            "for example with np.asarray(y).astype(str), or replace the None labels."
        ) from None
    if classes.shape[0] < min_classes:
        raise ValueError(
            f"y has {classes.shape[0]} class(es) ({classes[:5].tolist()}), but at least "
            f"{min_classes} classes are needed. Pass labels from at least {min_classes} classes."
        )
    return classes, codes.astype(np.int64).ravel()



def check_X_y(X, y, *, min_samples=1, y_numeric=False, multi_output=False,
              allow_nonfinite=False):
    """Validate a feature matrix and its targets together (``allow_nonfinite`` for X as in
    :func:`check_array`).

    Returns
    -------
    X : ndarray
        See :func:`check_array`.
    y : ndarray
        1-D (or 2-D when ``multi_output``) targets; numeric targets are checked for NaN/inf.
    """
    X = check_array(X, min_samples=min_samples, allow_nonfinite=allow_nonfinite)
    if y is None:
        raise ValueError(
            "This estimator requires y to be passed, but the target y is None. "
            "Pass one target per row of X."
        )
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1 and not multi_output:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected; it was raveled to "
            "shape (n_samples,).",
            compatible(DataConversionWarning),
            stacklevel=3,
        )
        y = y.ravel()
    if y.ndim == 0 or (y.ndim > 1 and not multi_output) or y.ndim > 2:
        raise ValueError(
            f"y should be a 1-D array of targets, got shape {y.shape}."
            + (" For several outputs use a 2-D array." if multi_output else "")
        )
    if y.dtype.kind == "c":
        raise ValueError(
            f"Complex data not supported: y is complex (dtype {y.dtype}). Pass y.real or "
            "np.abs(y) as appropriate."
        )
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"X and y have inconsistent numbers of samples: X has {X.shape[0]}, "
            f"y has {y.shape[0]}. Pass one target per row of X."
        )
    if y_numeric:
        if y.dtype.kind not in "fiub":
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(
                    f"y must be numeric, got dtype {y.dtype}. Pass numeric targets; for class "
                    "labels use a classifier."
                ) from None
        y = y.astype(np.float64, copy=False)
        check_finite(y, "y")
    elif y.dtype.kind == "f":
        check_finite(y, "y")
    return X, y



def check_is_fitted(estimator, attribute):
    """Raise :class:`NotFittedError` unless ``estimator`` has ``attribute``."""
    if not hasattr(estimator, attribute):
        raise compatible(NotFittedError)(
            f"This {type(estimator).__name__} instance is not fitted yet. "
            "Call 'fit' with appropriate arguments before using this estimator."
        )



def check_n_features(estimator, X, method):
    """Raise when ``X`` has a different feature count from the one seen in ``fit``."""
    expected = estimator.n_features_in_
    if X.shape[1] != expected:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{expected} features as input (the number seen in fit). Pass data with "
            f"{expected} columns to {method}."
        )



def check_query(estimator, X, method, *, name="X", **kwargs):
    """Validate the input of a method of a fitted estimator (``transform``, ``predict``, ...).

    Checks, in scikit-learn's order, the column names (:func:`check_feature_names`), the
    array (:func:`check_array` with ``kwargs``) and the feature count
    (:func:`check_n_features`).

    Parameters
    ----------
    estimator : fitted estimator
    X : array-like
    method : str
        The method's name, for the messages.
    name : str
        How X is called in the messages.
    **kwargs
        Passed to :func:`check_array`.

    Returns
    -------
    ndarray
    """
    check_feature_names(estimator, X)
    arr = check_array(X, name=name, **kwargs)
    check_n_features(estimator, arr, method)
    return arr

