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

from .exceptions import InvalidParameterError, compatible


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
