"""Input and parameter checks shared by every public estimator and function.

All user-facing errors live in the public tier; kernels assume validated input. Every message
says what was expected, what was received, and what to do instead.
"""

import numbers
import warnings

import numpy as np

from ._config import memory_budget
from .exceptions import (
    DataConversionWarning,
    InvalidParameterError,
    MemoryBudgetError,
    NotFittedError,
    compatible,
)

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


def check_distance_magnitude(X, name="X", *, centre=None, dtype=None):
    """Refuse values so large (or so small) that squared distances overflow (or underflow).

    Every distance kernel forms squared distances (directly, or as ``|x - c|^2 + |y - c|^2
    - 2 (x - c).(y - c)`` around a centre c). With rows further than about 1e154 from the
    centre (about 1.8e19 in float32) those overflow to inf, and neighbour searches then meet
    "no neighbour" markers instead of indices. This check bounds them at the boundary:
    ``16 max_i |x_i - c|^2`` must be finite in float64 and in ``dtype``, which covers the
    squared distance between any two rows (at most ``4 max |x - c|^2``) with room to spare.
    At the other end, ``max_i |x_i - c|^2`` must not underflow ``dtype`` (about 1e-308 in
    float64, 1e-38 in float32; exactly 0, identical rows, is fine), or all distances are 0
    (checked for the training rows only: a query may lie as close to the centre as it likes).

    Parameters
    ----------
    X : ndarray of shape (m, d)
        Finite (already validated by :func:`check_array`).
    name : str
        How X is called in the message.
    centre : ndarray of shape (d,) or None
        The centre of the training data, for queries measured against it; None means the
        mean of X.
    dtype : numpy dtype or None
        The dtype the distances are computed in; None means X's dtype.

    Returns
    -------
    ndarray of shape (d,), float64
        The centre used (the mean of X when ``centre`` is None), to check later queries.

    Raises
    ------
    ValueError
        When the squared distances would overflow.
    """
    X64 = np.asarray(X, dtype=np.float64)
    # queries are measured against the training rows, whose own spread was checked at fit
    check_small = centre is None
    work = np.dtype(X.dtype if dtype is None else dtype)
    limit = np.finfo(work if work.kind == "f" else np.float64).max / 16
    with np.errstate(over="ignore", invalid="ignore"):
        if centre is None:
            centre = X64.mean(axis=0) if X64.shape[0] else np.zeros(X64.shape[1])
        # scale before squaring so that the norms themselves never overflow
        shifted = X64 - centre
        scale = np.abs(shifted).max() if shifted.size else 0.0
        if np.isfinite(scale) and scale > 0:
            unit = shifted / scale
            sq_norm = float(np.einsum("ij,ij->i", unit, unit).max()) * scale * scale
        else:
            sq_norm = 0.0 if scale == 0 else np.inf
    if not np.isfinite(centre).all() or not sq_norm <= limit:
        largest = float(np.abs(X64).max()) if X64.size else 0.0
        raise ValueError(
            f"{name} holds values too large to compute distances: the largest absolute value "
            f"is {largest:.3g}, so squared distances between rows overflow {work.name} (rows "
            f"must lie within about {np.sqrt(limit):.1g} of the data's centre). Scale the "
            "data first, for example with sklearn.preprocessing.StandardScaler."
        )
    tiny = float(np.finfo(work if work.kind == "f" else np.float64).tiny)
    if check_small and 0 < sq_norm < tiny:
        raise ValueError(
            f"{name} holds values too small to compute distances: the rows spread over only "
            f"{np.sqrt(sq_norm):.3g} around their centre, so squared distances underflow "
            f"{work.name} (below {tiny:.3g}) and every neighbour would tie. Scale the data "
            "first, for example with sklearn.preprocessing.StandardScaler."
        )
    return centre


def check_neighbor_indices(indices, distances, n_samples, what):
    """Check indices returned by a tree or a heap before any kernel reads through them.

    Parameters
    ----------
    indices : ndarray of int
        Neighbour indices; each must lie in ``[0, n_samples)``.
    distances : ndarray or None
        Their distances; each must be finite (inf or NaN marks "no neighbour found").
    n_samples : int
        The number of points searched.
    what : str
        The search, for the message.

    Raises
    ------
    ValueError
        When an index is out of range or a distance is not finite.
    """
    bad = (indices < 0) | (indices >= n_samples)
    if distances is not None:
        bad |= ~np.isfinite(distances)
    if bad.any():
        raise ValueError(
            f"{what} returned {int(bad.sum())} 'no neighbour' marker(s) (an index outside "
            f"[0, {n_samples}) or an infinite distance), so the distances overflowed or the "
            "search failed. Scale the data (for example with "
            "sklearn.preprocessing.StandardScaler) and try again."
        )


def _column_names(X):
    """The string column names of a DataFrame-like X, or None (no names, or not all str)."""
    columns = getattr(X, "columns", None)
    if columns is None or isinstance(X, np.ndarray):
        return None
    names = np.asarray(list(columns), dtype=object)
    kinds = sorted({type(name).__name__ for name in names})
    if len(kinds) > 1 and "str" in kinds:
        raise TypeError(
            f"Feature names are only supported if all input features have string names, but "
            f"X has column names of types {kinds}. Convert them all to strings (for example "
            "X.columns = X.columns.astype(str)) to have them stored and checked, or to "
            "another type to have them ignored."
        )
    return names if kinds == ["str"] else None


def record_feature_names(estimator, X):
    """At ``fit``: set ``feature_names_in_`` from X's string column names, or remove it.

    Call it with the raw X (before :func:`check_array`), as scikit-learn does.

    Parameters
    ----------
    estimator : estimator being fitted
    X : array-like
        The training input, possibly a pandas DataFrame.
    """
    names = _column_names(X)
    if names is None:
        estimator.__dict__.pop("feature_names_in_", None)
    else:
        estimator.feature_names_in_ = names


def check_feature_names(estimator, X):
    """After ``fit``: check X's column names against ``feature_names_in_``.

    Parameters
    ----------
    estimator : fitted estimator
    X : array-like
        The raw input of ``transform``, ``predict``, ``kneighbors``, ...

    Raises
    ------
    ValueError
        When both have names and they differ, or come in another order.

    Warns
    -----
    UserWarning
        When only one of the two has names.
    """
    fitted = getattr(estimator, "feature_names_in_", None)
    names = _column_names(X)
    cls = type(estimator).__name__
    if fitted is None and names is None:
        return
    if fitted is None:
        warnings.warn(f"X has feature names, but {cls} was fitted without feature names",
                      UserWarning, stacklevel=3)
        return
    if names is None:
        warnings.warn(f"X does not have valid feature names, but {cls} was fitted with "
                      "feature names", UserWarning, stacklevel=3)
        return
    if len(fitted) == len(names) and (fitted == names).all():
        return
    unseen = [n for n in names if n not in set(fitted)]
    missing = [n for n in fitted if n not in set(names)]
    message = "The feature names should match those that were passed during fit.\n"
    if unseen:
        message += "Feature names unseen at fit time:\n" + _bullets(unseen)
    if missing:
        message += "Feature names seen at fit time, yet now missing:\n" + _bullets(missing)
    if not unseen and not missing:
        message += "Feature names must be in the same order as they were in fit.\n"
    message += f"Pass the columns in fit's order, for example X[{cls}.feature_names_in_]."
    raise ValueError(message)


def _bullets(names, shown=5):
    text = "".join(f"- {n}\n" for n in names[:shown])
    return text + ("- ...\n" if len(names) > shown else "")


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


# -- declarative parameter checks ----------------------------------------------------------
#
# Each estimator lists its constructor parameters in a class attribute
# ``_parameter_constraints = {name: [constraint, ...]}``; ``validate_params(self)`` at the
# start of ``fit`` accepts a value when any one constraint holds. Constraints: an
# :class:`Interval`, :class:`StrOptions`, ``None``, a type (``dict``, ``numbers.Integral``),
# the builtin ``callable``, :class:`HasMethods`, :class:`Satisfies`, or one of the strings
# ``"array-like"``, ``"boolean"``, ``"random_state"``. Checks that involve several parameters
# or the data stay in the estimator, after this one.


class Interval:
    """Numbers of one kind in a range.

    Parameters
    ----------
    kind : numbers.Integral or numbers.Real
        Integers only (bools excluded), or any real number (ints included).
    left, right : number or None
        Bounds; None means unbounded (infinity itself is never accepted there).
    closed : {"left", "right", "both", "neither"}
        Which bounds are allowed values.
    """

    def __init__(self, kind, left, right, *, closed):
        self.kind, self.left, self.right, self.closed = kind, left, right, closed

    def is_satisfied_by(self, value):
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        if not -np.inf < value < np.inf:  # also NaN
            return False
        if self.left is not None:
            if value < self.left or (value == self.left and self.closed in ("right", "neither")):
                return False
        if self.right is not None:
            if value > self.right or (value == self.right and self.closed in ("left", "neither")):
                return False
        return True

    def __str__(self):
        kind = "an int" if self.kind is numbers.Integral else "a float"
        lo = "-inf" if self.left is None else repr(self.left)
        hi = "inf" if self.right is None else repr(self.right)
        opening = "[" if self.left is not None and self.closed in ("left", "both") else "("
        closing = "]" if self.right is not None and self.closed in ("right", "both") else ")"
        return f"{kind} in the range {opening}{lo}, {hi}{closing}"


class StrOptions:
    """One of a fixed set of strings."""

    def __init__(self, options):
        self.options = tuple(options)

    def is_satisfied_by(self, value):
        return isinstance(value, str) and value in self.options

    def __str__(self):
        return f"a str among {{{', '.join(repr(o) for o in self.options)}}}"


class HasMethods:
    """An object with all of the given methods."""

    def __init__(self, methods):
        self.methods = tuple(methods)

    def is_satisfied_by(self, value):
        return all(callable(getattr(value, m, None)) for m in self.methods)

    def __str__(self):
        return f"an object implementing {' and '.join(repr(m) for m in self.methods)}"


class Satisfies:
    """Any value for which ``predicate(value)`` is true, described by ``description``."""

    def __init__(self, predicate, description):
        self.predicate, self.description = predicate, description

    def is_satisfied_by(self, value):
        return bool(self.predicate(value))

    def __str__(self):
        return self.description


_NAMED_CONSTRAINTS = {
    "array-like": (lambda v: isinstance(v, (np.ndarray, list, tuple)) or hasattr(v, "__array__"),
                   "an array-like"),
    "boolean": (lambda v: isinstance(v, (bool, np.bool_)), "a bool"),
    "random_state": (lambda v: v is None or (isinstance(v, numbers.Integral)
                                             and not isinstance(v, bool))
                     or isinstance(v, (np.random.RandomState, np.random.Generator)),
                     "an int, a numpy RandomState or Generator, or None"),
}


def _satisfied(constraint, value):
    if constraint is None:
        return value is None
    if constraint is callable:
        return callable(value)
    if isinstance(constraint, str):
        return _NAMED_CONSTRAINTS[constraint][0](value)
    if isinstance(constraint, type):
        return isinstance(value, constraint) and not (
            isinstance(value, bool) and constraint in (numbers.Integral, numbers.Real))
    return constraint.is_satisfied_by(value)


def _describe(constraint):
    if constraint is None:
        return "None"
    if constraint is callable:
        return "a callable"
    if isinstance(constraint, str):
        return _NAMED_CONSTRAINTS[constraint][1]
    if isinstance(constraint, type):
        names = {numbers.Integral: "int", numbers.Real: "float"}
        return f"an instance of {names.get(constraint, constraint.__name__)!r}"
    return str(constraint)


def validate_params(estimator):
    """Check every constructor parameter against the class's ``_parameter_constraints``.

    Parameters
    ----------
    estimator : object
        Its class holds ``_parameter_constraints``, a dict from parameter name to a list of
        constraints (see the comment above :class:`Interval`); a value passes when it
        satisfies any one of them.

    Raises
    ------
    fastdr.exceptions.InvalidParameterError
        (A ``ValueError`` and ``TypeError``; also scikit-learn's ``InvalidParameterError``
        when scikit-learn is imported.) The message names the parameter, the allowed
        values and the value received.
    """
    cls = type(estimator).__name__
    for name, constraints in type(estimator)._parameter_constraints.items():
        value = getattr(estimator, name)
        if any(_satisfied(c, value) for c in constraints):
            continue
        described = [_describe(c) for c in constraints]
        allowed = (described[0] if len(described) == 1
                   else f"{', '.join(described[:-1])} or {described[-1]}")
        raise compatible(InvalidParameterError)(
            f"The {name!r} parameter of {cls} must be {allowed}. Got {value!r} instead."
        )


#: ``n_jobs``: None (all cores), a positive thread count, or -k (all but k - 1).
N_JOBS = [Satisfies(lambda v: isinstance(v, numbers.Integral) and not isinstance(v, bool)
                    and v != 0, "a non-zero int"), None]


def check_sparse_graph(graph, name="graph"):
    """Validate a user-supplied sparse graph before any kernel walks it; return it as CSR.

    A CSR matrix built from raw ``(data, indices, indptr)`` arrays is not checked by scipy,
    and a kernel reading an out-of-range column index reads foreign memory.

    Parameters
    ----------
    graph : scipy sparse matrix of shape (m, m)
        Non-negative, finite edge lengths.
    name : str
        How the graph is called in the messages.

    Returns
    -------
    scipy.sparse.csr_matrix
    """
    import scipy.sparse

    csr = scipy.sparse.csr_matrix(graph)
    if csr.shape[0] != csr.shape[1]:
        raise ValueError(f"{name} must be square, got shape {csr.shape}.")
    try:
        csr.check_format(full_check=True)
    except ValueError as exc:
        raise ValueError(
            f"{name} is not a valid CSR matrix ({exc}): its column indices must lie in "
            f"[0, {csr.shape[1]}) and its indptr must be non-decreasing. Rebuild it, for "
            "example with scipy.sparse.csr_matrix((data, (rows, cols)), shape=(m, m))."
        ) from None
    if csr.nnz and not np.isfinite(csr.data).all():
        raise ValueError(
            f"{name} has NaN or infinite edge lengths; store only finite lengths (a missing "
            "edge is an entry that is not stored)."
        )
    if csr.nnz and (csr.data < 0).any():
        raise ValueError(f"{name} has negative edge lengths; shortest paths need lengths >= 0.")
    return csr
