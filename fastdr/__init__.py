"""fastdr: dimensionality reduction and metric learning with Numba kernels.

Importing fastdr compiles nothing: kernels compile on first use and are cached on disk.
"""

from .exceptions import (
    ConvergenceWarning,
    DataConversionWarning,
    MemoryBudgetError,
    NotFittedError,
)
from .neighbors import (
    KNeighborsClassifier,
    KNeighborsRegressor,
    NearestNeighbors,
    kneighbors_graph,
    radius_neighbors_graph,
)
from .pairwise import pairwise_distances

__version__ = "0.1.0"

__all__ = [
    "ConvergenceWarning",
    "DataConversionWarning",
    "KNeighborsClassifier",
    "KNeighborsRegressor",
    "MemoryBudgetError",
    "NearestNeighbors",
    "NotFittedError",
    "kneighbors_graph",
    "pairwise_distances",
    "radius_neighbors_graph",
]
