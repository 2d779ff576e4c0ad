"""fastdr's exception and warning classes.

When scikit-learn has been imported in the process, the classes actually raised also inherit
from scikit-learn's classes of the same name, so code (and scikit-learn's own estimator
checks) that catches ``sklearn.exceptions.NotFittedError`` keeps working. fastdr never
imports scikit-learn itself.
"""

import sys


class NotFittedError(ValueError, AttributeError):
    """Raised when an estimator is used before ``fit``."""


class DataConversionWarning(UserWarning):
    """Warns that input data were converted (for example a column-vector ``y`` raveled)."""


class ConvergenceWarning(UserWarning):
    """Warns that an iterative solver stopped before converging."""


class MemoryBudgetError(MemoryError):
    """Raised before a dense allocation that would not fit in the memory budget.

    The budget is 80% of available memory, or the ``FASTDR_MEMORY_BUDGET`` environment
    variable (bytes, or with a K/M/G suffix).
    """


class InvalidParameterError(ValueError, TypeError):
    """Raised when a constructor parameter has a value or type it does not allow.

    Derives from both ``ValueError`` and ``TypeError``, like scikit-learn's class of the same
    name (which the raised class also derives from once scikit-learn is imported).
    """


class EigenSolverError(RuntimeError):
    """Raised when an eigensolver fails; the message names a different ``eigen_solver`` to try.

    The estimators that solve an eigenproblem (PCA, KernelPCA, ClassicalMDS, Isomap,
    LocallyLinearEmbedding, LinearDiscriminantAnalysis, the metric learners) let it through.
    """


_COMPATIBLE = {}
# where scikit-learn keeps the classes that fastdr mirrors
_SKLEARN_HOMES = ("sklearn.exceptions", "sklearn.utils._param_validation")


def compatible(cls):
    """Return ``cls``, or a subclass that also derives from scikit-learn's class of that name.

    Parameters
    ----------
    cls : type
        One of this module's classes.

    Returns
    -------
    type
    """
    sk_cls = None
    for home in _SKLEARN_HOMES:
        sk_cls = getattr(sys.modules.get(home), cls.__name__, None)
        if sk_cls is not None:
            break
    if sk_cls is None:
        return cls
    if cls not in _COMPATIBLE:
        _COMPATIBLE[cls] = type(cls.__name__, (cls, sk_cls), {"__module__": __name__,
                                                             "__doc__": cls.__doc__})
    return _COMPATIBLE[cls]
