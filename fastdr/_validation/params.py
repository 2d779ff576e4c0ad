"""Declarative parameter checks, in the manner of scikit-learn's parameter constraints.

Each estimator lists its constructor parameters in a class attribute
``_parameter_constraints = {name: [constraint, ...]}``; ``validate_params(self)`` at the
start of ``fit`` accepts a value when any one constraint holds. Constraints: an
:class:`Interval`, :class:`StrOptions`, ``None``, a type (``dict``, ``numbers.Integral``),
the builtin ``callable``, :class:`HasMethods`, :class:`Satisfies`, or one of the strings
``"array-like"``, ``"boolean"``, ``"random_state"``. Checks that involve several parameters
or the data stay in the estimator, after this one.
"""

import numbers

import numpy as np

from ..exceptions import InvalidParameterError, compatible


class Interval:
    """Numbers of one kind in a range.

    Parameters
    ----------
    kind : numbers.Integral or numbers.Real
        Integers only (bools excluded), or any real number (ints included).
    left, right : number or None
        Bounds; None means unbounded, infinity itself included where that side is closed
        (as in scikit-learn: ``Interval(Real, 0, None, closed="both")`` accepts ``inf``).
    closed : {"left", "right", "both", "neither"}
        Which bounds are allowed values.
    """

    def __init__(self, kind, left, right, *, closed):
        self.kind, self.left, self.right, self.closed = kind, left, right, closed

    def is_satisfied_by(self, value):
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        if value != value:  # NaN
            return False
        if value == np.inf:  # only where the range is unbounded and closed above
            return self.right is None and self.closed in ("right", "both")
        if value == -np.inf:
            return self.left is None and self.closed in ("left", "both")
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
        opening = "[" if self.closed in ("left", "both") else "("
        closing = "]" if self.closed in ("right", "both") else ")"
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
        constraints (see the module docstring); a value passes when it
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
        if constraints == "no_validation":  # checked by the estimator itself (its own words)
            continue
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

#: ``verbose``: 0 (silent) or a positive level; booleans are accepted as 0 and 1.
VERBOSE = [Interval(numbers.Integral, 0, None, closed="left"), "boolean"]


def check_scalar(value, name, kinds, *, min_value=None, max_value=None, include_min=True,
                 include_max=True, allow_none=False, allow_inf=False):
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
    allow_inf : bool
        Accept +inf (within the bounds); NaN is never accepted.
    """
    if value is None and allow_none:
        return None
    is_int = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    is_real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if kinds == "int" and not is_int:
        raise TypeError(f"{name} must be an int, got {value!r} of type {type(value).__name__}.")
    if kinds == "real" and not is_real:
        raise TypeError(f"{name} must be a number, got {value!r} of type {type(value).__name__}.")
    if is_real and not np.isfinite(value) and not (allow_inf and value == np.inf):
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



def check_graph_mode(mode):
    """Check a neighbour graph's ``mode`` (scikit-learn's message); return it."""
    if not isinstance(mode, str) or mode not in ("connectivity", "distance"):
        raise ValueError('Unsupported mode, must be one of "connectivity", or "distance" but '
                         f'got "{mode}" instead')
    return mode


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

