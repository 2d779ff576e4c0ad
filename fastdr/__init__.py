"""fastdr: dimensionality reduction and metric learning with Numba kernels.

Importing fastdr is cheap and compiles nothing: public names are loaded from their modules on
first access (PEP 562), and kernels compile on first use and are cached on disk.

Importing fastdr sets one environment default, ``OPENBLAS_THREAD_TIMEOUT=12``, unless the
variable is already set: an OpenBLAS loaded after it (scipy's, when ``scipy.linalg`` comes
later) lets its idle worker threads sleep after 2^12 cycles instead of spinning for 2^28.
Spinning workers of one OpenBLAS starve the threads of the other copy (numpy and scipy each
ship one) and of numba on a small machine, which slows fastdr's calls and scikit-learn's
alike (bench: pca_arpack). Set the variable yourself to override.
"""

import importlib
import os

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "12")

from .exceptions import (
    ConvergenceWarning,
    DataConversionWarning,
    EigenSolverError,
    InvalidParameterError,
    MemoryBudgetError,
    NotFittedError,
)

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    "pairwise_distances": "fastdr.pairwise",
    "NearestNeighbors": "fastdr.neighbors",
    "KNeighborsClassifier": "fastdr.neighbors",
    "KNeighborsRegressor": "fastdr.neighbors",
    "kneighbors_graph": "fastdr.neighbors",
    "radius_neighbors_graph": "fastdr.neighbors",
    "nndescent_graph": "fastdr.neighbors",
    "nndescent_query": "fastdr.neighbors",
    "PCA": "fastdr.decomposition",
    "KernelPCA": "fastdr.decomposition",
    "LinearDiscriminantAnalysis": "fastdr.discriminant",
    "ClassicalMDS": "fastdr.manifold",
    "Isomap": "fastdr.manifold",
    "LocallyLinearEmbedding": "fastdr.manifold",
    "locally_linear_embedding": "fastdr.manifold",
    "geodesic_distances": "fastdr.manifold",
    "Mahalanobis": "fastdr.metric_learning",
    "NeighborhoodComponentsAnalysis": "fastdr.metric_learning",
    "MMC": "fastdr.metric_learning",
    "MMC_Supervised": "fastdr.metric_learning",
    "warmup": "fastdr._runtime.warmup",
    "show_versions": "fastdr._runtime.versions",
}

__all__ = [
    "ClassicalMDS",
    "ConvergenceWarning",
    "DataConversionWarning",
    "EigenSolverError",
    "InvalidParameterError",
    "Isomap",
    "KNeighborsClassifier",
    "KNeighborsRegressor",
    "KernelPCA",
    "LinearDiscriminantAnalysis",
    "LocallyLinearEmbedding",
    "MMC",
    "MMC_Supervised",
    "Mahalanobis",
    "MemoryBudgetError",
    "NearestNeighbors",
    "NeighborhoodComponentsAnalysis",
    "NotFittedError",
    "PCA",
    "geodesic_distances",
    "kneighbors_graph",
    "locally_linear_embedding",
    "nndescent_graph",
    "nndescent_query",
    "pairwise_distances",
    "radius_neighbors_graph",
    "show_versions",
    "warmup",
]


def __getattr__(name):
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module 'fastdr' has no attribute {name!r}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise AttributeError(f"module 'fastdr' has no attribute {name!r}") from None
    try:
        value = getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module 'fastdr' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
