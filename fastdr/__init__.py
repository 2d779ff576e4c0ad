"""fastdr: dimensionality reduction and metric learning with Numba kernels.

Importing fastdr is cheap and compiles nothing: public names are loaded from their modules on
first access (PEP 562), and kernels compile on first use and are cached on disk.

Importing fastdr changes nothing in the process (no environment variable, no numba or BLAS
setting); process-wide choices are made with :func:`set_config` (memory budget, numba's
threading layer, OpenBLAS's idle spin), each default documented there.
"""

import importlib

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
    "IncrementalPCA": "fastdr.decomposition",
    "LinearDiscriminantAnalysis": "fastdr.discriminant",
    "ClassicalMDS": "fastdr.manifold",
    "Isomap": "fastdr.manifold",
    "LocallyLinearEmbedding": "fastdr.manifold",
    "locally_linear_embedding": "fastdr.manifold",
    "geodesic_distances": "fastdr.manifold",
    "Mahalanobis": "fastdr.metric_learning",
    "NeighborhoodComponentsAnalysis": "fastdr.metric_learning",
    "NCA": "fastdr.metric_learning",
    "MMC": "fastdr.metric_learning",
    "MMC_Supervised": "fastdr.metric_learning",
    "Covariance": "fastdr.metric_learning",
    "LFDA": "fastdr.metric_learning",
    "LMNN": "fastdr.metric_learning",
    "ITML": "fastdr.metric_learning",
    "ITML_Supervised": "fastdr.metric_learning",
    "MLKR": "fastdr.metric_learning",
    "RCA": "fastdr.metric_learning",
    "RCA_Supervised": "fastdr.metric_learning",
    "LSML": "fastdr.metric_learning",
    "LSML_Supervised": "fastdr.metric_learning",
    "SCML": "fastdr.metric_learning",
    "SCML_Supervised": "fastdr.metric_learning",
    "SDML": "fastdr.metric_learning",
    "SDML_Supervised": "fastdr.metric_learning",
    "warmup": "fastdr._runtime.warmup",
    "show_versions": "fastdr._runtime.versions",
    "set_config": "fastdr._runtime.settings",
    "get_config": "fastdr._runtime.settings",
    "config_context": "fastdr._runtime.settings",
}

__all__ = [
    "ClassicalMDS",
    "ConvergenceWarning",
    "Covariance",
    "DataConversionWarning",
    "EigenSolverError",
    "ITML",
    "ITML_Supervised",
    "IncrementalPCA",
    "InvalidParameterError",
    "Isomap",
    "KNeighborsClassifier",
    "KNeighborsRegressor",
    "KernelPCA",
    "LFDA",
    "LMNN",
    "LSML",
    "LSML_Supervised",
    "LinearDiscriminantAnalysis",
    "LocallyLinearEmbedding",
    "MLKR",
    "MMC",
    "MMC_Supervised",
    "Mahalanobis",
    "MemoryBudgetError",
    "NCA",
    "NearestNeighbors",
    "NeighborhoodComponentsAnalysis",
    "NotFittedError",
    "PCA",
    "RCA",
    "RCA_Supervised",
    "SCML",
    "SCML_Supervised",
    "SDML",
    "SDML_Supervised",
    "config_context",
    "geodesic_distances",
    "get_config",
    "kneighbors_graph",
    "locally_linear_embedding",
    "nndescent_graph",
    "nndescent_query",
    "pairwise_distances",
    "radius_neighbors_graph",
    "set_config",
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
