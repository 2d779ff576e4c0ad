"""pandas column names, as scikit-learn handles them: recorded in ``fit`` as
``feature_names_in_`` (only when every name is a str), checked by every later call.

In ``fit``: ``record_feature_names(self, X)`` with the raw X. Afterwards:
``check_feature_names(self, X)`` with the raw X, or
:func:`fastdr._validation.check_query`, which also converts X and checks its width.
pandas is never imported: any object with a ``columns`` attribute counts.
"""

import warnings

import numpy as np


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
