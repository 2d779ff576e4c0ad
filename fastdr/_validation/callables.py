"""Checks on what a user's callable (a metric or a kernel) returns, before any kernel or
scipy routine uses it.

A callable is the user's code, so its output is input like any other: it must return one
real number per pair, and a metric must return a finite distance >= 0. Every route that
calls a user function goes through :func:`probe` once (before the loop, so a wrong signature
or an array return gets a clear message instead of a numba typing dump or numpy's "setting
an array element with a sequence") and through :func:`check_values` on the filled block.

An exception raised inside a numba-jitted callable in a parallel loop is not propagated by
numba: the kernel returns with the entry unwritten (on the TBB layer, where the calling
thread runs a share of the loop, its exception is left set and the call ends in a
``SystemError``, which the caller drops). The block is therefore filled with NaN first, and
:func:`check_values` calls the function again from Python on the first unwritten pair, where
the exception surfaces with its own message.
"""

import numbers

import numpy as np


def _describe(func):
    return f"The {getattr(func, '__name__', type(func).__name__)!r} callable"


def probe(func, x, y, params, *, role):
    """Call ``func(x, y, **params)`` once and return its value as a float.

    Parameters
    ----------
    func : callable
        The user's metric or kernel (a Python function or a numba dispatcher).
    x, y : ndarray or sparse row
        One pair of rows, as the loop will pass them.
    params : dict
        Keyword arguments of the callable.
    role : {"metric", "kernel"}
        What the callable computes, for the messages.

    Returns
    -------
    float

    Raises
    ------
    TypeError
        When the call fails with a typing error (wrong number or kind of arguments, or a
        numba function that does not compile for these arguments) or returns a non-scalar.
    """
    what = _describe(func)
    expected = (f"a {role} callable takes two 1-D rows (and its keyword arguments) and "
                "returns one number")
    try:
        value = func(x, y, **params)
    except TypeError as exc:  # numba's TypingError is a TypeError too
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TypeError(
            f"{what} could not be called as func(x, y{', **params' if params else ''}): "
            f"{first}. {expected[0].upper() + expected[1:]}."
        ) from exc
    return _as_number(value, what, expected)


def _as_number(value, what, expected):
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    arr = np.asarray(value)
    if arr.ndim != 0 or arr.dtype.kind not in "fiu":
        raise TypeError(
            f"{what} returned {type(value).__name__}"
            f"{' of shape ' + str(arr.shape) if arr.ndim else ''}, not a number: {expected}."
            " Return a float, for example float(np.sqrt(...)) or result.item()."
        )
    return float(arr)


def check_values(out, func, rows_x, rows_y, params, *, role):
    """Check a block filled by a user callable: finite everywhere, and >= 0 for a metric.

    Parameters
    ----------
    out : ndarray of shape (m, n)
        The filled block (NaN where a jitted callable failed to write, see the module note).
    func : callable
    rows_x, rows_y : callable
        ``rows_x(i)`` gives the i-th row passed to ``func`` (to replay a failed pair).
    params : dict
    role : {"metric", "kernel"}

    Raises
    ------
    ValueError
        For NaN or infinite values, or a negative distance; the message names the first
        offending pair of rows and the value.
    """
    what = _describe(func)
    finite = np.isfinite(out)
    if not finite.all():
        i, j = (int(k) for k in np.argwhere(~finite)[0])
        value = func(rows_x(i), rows_y(j), **params)  # a swallowed exception surfaces here
        count = int((~finite).sum())
        raise ValueError(
            f"{what} returned {value!r} for rows {i} and {j} ({count} non-finite value(s) in "
            f"all): a {role} must return a finite number for every pair. Handle the case "
            "that produces it (a zero norm, a division by zero, missing values) inside the "
            "function."
        )
    if role == "metric" and out.size and out.min() < 0:
        i, j = (int(k) for k in np.unravel_index(int(np.argmin(out)), out.shape))
        raise ValueError(
            f"{what} returned a negative distance ({out[i, j]:.6g}) for rows {i} and {j}: a "
            "metric must return distances >= 0 (neighbour searches and shortest paths are "
            "undefined on negative lengths). Return a distance, not a similarity; for a "
            "similarity s in [0, 1], 1 - s is one."
        )
