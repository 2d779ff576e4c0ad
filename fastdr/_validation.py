"""Input and parameter checks shared by every public estimator and function.

All user-facing errors live in the public tier; kernels assume validated input. Every message
says what was expected, what was received, and what to do instead.
"""

import numbers
import warnings

import numpy as np

from ._config import budget_applies, memory_budget
from ._feature_names import check_feature_names
from .exceptions import DataConversionWarning, MemoryBudgetError, NotFittedError, compatible

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
    allow_nonfinite : bool
        Accept NaN and inf (only for inputs where they mean something, such as a graph).
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
            f"{name} is a sparse matrix; fastdr needs dense input here. "
            f"Convert it with {name}.toarray()."
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
    if not allow_nonfinite:
        check_finite(arr, name)
    return arr


def check_finite(arr, name):
    """Raise a ValueError naming ``name`` when ``arr`` holds NaN or inf."""
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


def check_X_y(X, y, *, min_samples=1, y_numeric=False, multi_output=False):
    """Validate a feature matrix and its targets together.

    Returns
    -------
    X : ndarray
        See :func:`check_array`.
    y : ndarray
        1-D (or 2-D when ``multi_output``) targets; numeric targets are checked for NaN/inf.
    """
    X = check_array(X, min_samples=min_samples)
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


def check_scalar(value, name, kinds, *, min_value=None, max_value=None, include_min=True,
                 include_max=True, allow_none=False):
    """Check a scalar parameter's type and range; return it.

    Parameters
    ----------
    value : object
        The parameter value.
    name : str
        The parameter name, for the message.
    kinds : {"int", "real"}
        Accepted type: integers only, or any real number.
    min_value, max_value : number or None
        Bounds.
    include_min, include_max : bool
        Whether the bounds are allowed values.
    allow_none : bool
        Accept ``None`` (returned as is).
    """
    if value is None and allow_none:
        return None
    is_int = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    is_real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if kinds == "int" and not is_int:
        raise TypeError(f"{name} must be an int, got {value!r} of type {type(value).__name__}.")
    if kinds == "real" and not is_real:
        raise TypeError(f"{name} must be a number, got {value!r} of type {type(value).__name__}.")
    if is_real and not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}.")
    if min_value is not None:
        bad = value < min_value if include_min else value <= min_value
        if bad:
            op = ">=" if include_min else ">"
            raise ValueError(f"{name} must be {op} {min_value}, got {value!r}.")
    if max_value is not None:
        bad = value > max_value if include_max else value >= max_value
        if bad:
            op = "<=" if include_max else "<"
            raise ValueError(f"{name} must be {op} {max_value}, got {value!r}.")
    return value


def check_option(value, name, options):
    """Check that ``value`` is one of ``options``; return it."""
    if not isinstance(value, str) or value not in options:
        choices = ", ".join(repr(o) for o in options)
        raise ValueError(f"{name} must be one of {choices}; got {value!r}.")
    return value


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


def check_dense_allocation(shape, dtype, *, what, alternative):
    """Announce a dense allocation and refuse it when it would not fit.

    Parameters
    ----------
    shape : tuple of int
        Shape of the array about to be allocated.
    dtype : numpy dtype
        Its dtype.
    what : str
        What the array is, for the message (e.g. "the m x m geodesic distance matrix").
    alternative : str
        What the user can do instead (landmarks, float32, a smaller m, blocks).

    Returns
    -------
    int
        The number of bytes that will be allocated.

    Raises
    ------
    MemoryBudgetError
        When the bytes exceed :func:`fastdr._config.memory_budget`.
    """
    n_bytes = int(np.prod([int(s) for s in shape], dtype=np.float64)) * np.dtype(dtype).itemsize
    if not budget_applies(n_bytes):
        return n_bytes
    budget = memory_budget()
    if n_bytes > budget:
        dims = " x ".join(str(int(s)) for s in shape)
        raise MemoryBudgetError(
            f"{what} needs {n_bytes:,} bytes ({n_bytes / 2**30:.2f} GiB, shape {dims}, "
            f"{np.dtype(dtype).name}), more than the memory budget of {budget:,} bytes "
            f"({budget / 2**30:.2f} GiB). {alternative} The budget is 80% of available "
            "memory, or the FASTDR_MEMORY_BUDGET environment variable."
        )
    return n_bytes


# ---- spectral estimators: n_components, precomputed square matrices, symmetry ----------

#: A square matrix counts as symmetric when ``max |A - A^T| <= SYMMETRY_RTOL * max |A|``.
SYMMETRY_RTOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}


def check_symmetric(A, what, *, asymmetry=None, biggest=None):
    """Raise unless ``A`` is symmetric to within its dtype's round-off (one rule for all).

    The rule: ``max |A - A^T| <= SYMMETRY_RTOL[dtype] * max |A|`` (1e-10 for float64, 1e-5
    for float32).

    Parameters
    ----------
    A : ndarray of shape (n, n)
    what : str
        How the matrix is called in the message.
    asymmetry, biggest : float or None
        ``max |A - A^T|`` and ``max |A|`` when the caller has them already.
    """
    if asymmetry is None:
        A64 = np.asarray(A, dtype=np.float64)
        asymmetry = float(np.abs(A64 - A64.T).max()) if A64.size else 0.0
        biggest = float(np.abs(A64).max()) if A64.size else 0.0
    dtype = np.dtype(A.dtype) if np.dtype(A.dtype) in SYMMETRY_RTOL else np.dtype(np.float64)
    if asymmetry > SYMMETRY_RTOL[dtype] * biggest:
        raise ValueError(
            f"{what} must be symmetric; the largest asymmetry |A - A.T| is {asymmetry:.3g} "
            f"(largest entry {biggest:.3g}). Pass (A + A.T) / 2 if the asymmetry is round-off."
        )


def check_precomputed_square(A, what, *, negative_ok, n_jobs=None):
    """Validate a precomputed square matrix: finite, square, symmetric, (non-negative).

    Parameters
    ----------
    A : array-like of shape (m, m)
    what : str
        How the matrix is called in messages.
    negative_ok : bool
        Allow negative entries (kernels); distances must be non-negative.
    n_jobs : int or None
        Threads of the one-pass check.

    Returns
    -------
    ndarray
        The validated array (not copied unless conversion required it).
    """
    from ._kernels.matrix_checks import symmetry_stats  # numba: imported on first use
    from ._parallel import parallel_section

    A = check_array(A, name=what, min_samples=2)
    if A.shape[0] != A.shape[1]:
        raise ValueError(
            f"{what} must be square (n_samples, n_samples); got shape {A.shape}. With a "
            "precomputed metric or kernel, pass the matrix between the training samples."
        )
    with parallel_section(n_jobs):
        asym, biggest, smallest = symmetry_stats(A)
    check_symmetric(A, what, asymmetry=asym, biggest=biggest)
    if not negative_ok and smallest < 0:
        raise ValueError(
            f"{what} has a negative entry ({smallest:.3g}); distances must be >= 0. Pass a "
            "matrix of distances (not similarities or log-distances)."
        )
    return A


def check_n_components(n_components, max_components, *, estimator, limit, allow_none=True):
    """Validate ``n_components``: an int in [1, max_components] or a float in (0, 1].

    Parameters
    ----------
    n_components : int, float or None
    max_components : int
        The most components the estimator can return on this input.
    estimator : str
        The estimator's name, for the message.
    limit : str
        Why ``max_components`` is the limit, for the message ("min(n_samples, n_features)").
    allow_none : bool

    Returns
    -------
    int, float or None
        The int or float as given (a float is a cumulative-ratio threshold).
    """
    if n_components is None and allow_none:
        return None
    if isinstance(n_components, bool) or not isinstance(n_components, numbers.Real):
        raise TypeError(
            f"n_components must be an int, a float in (0, 1]"
            f"{' or None' if allow_none else ''}; got {n_components!r} of type "
            f"{type(n_components).__name__}."
        )
    if isinstance(n_components, numbers.Integral):
        n_components = int(n_components)
        if n_components < 1:
            raise ValueError(
                f"n_components must be >= 1; got {n_components}. Pass a positive int, or a "
                "float in (0, 1] to keep a share of the variance."
            )
        if n_components > max_components:
            raise ValueError(
                f"n_components={n_components} is larger than allowed: {estimator} can return "
                f"at most {limit} = {max_components} components on this input. Pass "
                f"n_components <= {max_components}."
            )
        return n_components
    t = float(n_components)
    if not (0.0 < t <= 1.0):
        raise ValueError(
            f"A float n_components is a share of the explained variance and must lie in "
            f"(0, 1]; got {n_components!r}. Pass an int for a number of components."
        )
    return t


def check_random_state(seed):
    """Turn ``seed`` into a ``numpy.random.Generator``-compatible RandomState.

    ``None`` and ints give a fresh ``numpy.random.RandomState``; an existing RandomState or
    Generator is returned as is.
    """
    if seed is None or isinstance(seed, numbers.Integral):
        return np.random.RandomState(seed)
    if isinstance(seed, (np.random.RandomState, np.random.Generator)):
        return seed
    raise ValueError(
        f"random_state must be None, an int, or a numpy RandomState/Generator; got {seed!r}."
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
