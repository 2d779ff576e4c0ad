"""Every public import path of fastdr keeps working, and ``import fastdr`` stays light.

The paths are written out here, not read from the package: a name that disappears from a
package (or from its ``__all__``) fails this test instead of shrinking it.
"""

import importlib
import subprocess
import sys
import types

import pytest

import fastdr

EXCEPTIONS = ["ConvergenceWarning", "DataConversionWarning", "EigenSolverError",
              "InvalidParameterError", "MemoryBudgetError", "NotFittedError"]

# module -> the public names importable from it today
PUBLIC = {
    "fastdr": [
        "ClassicalMDS", "Covariance", "ITML", "ITML_Supervised", "IncrementalPCA", "Isomap",
        "KNeighborsClassifier", "KNeighborsRegressor", "KernelPCA", "LFDA", "LMNN", "LSML",
        "LSML_Supervised", "MLKR", "LinearDiscriminantAnalysis", "LocallyLinearEmbedding", "MMC",
        "MMC_Supervised",
        "Mahalanobis", "NCA", "NearestNeighbors", "NeighborhoodComponentsAnalysis", "PCA", "RCA",
        "RCA_Supervised", "SCML", "SCML_Supervised", "SDML", "SDML_Supervised", "config_context",
        "geodesic_distances", "get_config", "kneighbors_graph",
        "locally_linear_embedding", "nndescent_graph", "nndescent_query", "pairwise_distances",
        "radius_neighbors_graph", "set_config", "show_versions", "warmup", *EXCEPTIONS,
    ],
    "fastdr.neighbors": ["KNeighborsClassifier", "KNeighborsRegressor", "NearestNeighbors",
                         "kneighbors_graph", "nndescent_graph", "nndescent_query",
                         "radius_neighbors_graph"],
    "fastdr.decomposition": ["IncrementalPCA", "KernelPCA", "PCA"],
    "fastdr.discriminant": ["LinearDiscriminantAnalysis"],
    "fastdr.manifold": ["ClassicalMDS", "Isomap", "LocallyLinearEmbedding",
                        "geodesic_distances", "locally_linear_embedding"],
    "fastdr.metric_learning": ["Covariance", "ITML", "ITML_Supervised", "LFDA", "LMNN", "LSML",
                               "LSML_Supervised", "MLKR", "MMC",
                               "MMC_Supervised", "Mahalanobis", "NCA",
                               "NeighborhoodComponentsAnalysis", "RCA", "RCA_Supervised",
                               "SCML", "SCML_Supervised", "SDML", "SDML_Supervised"],
    "fastdr.exceptions": EXCEPTIONS,
    "fastdr.pairwise": ["pairwise_distances"],
    "fastdr.dask": ["ClassicalMDS", "Isomap", "KNeighborsClassifier", "KNeighborsRegressor",
                    "LinearDiscriminantAnalysis", "NearestNeighbors",
                    "NeighborhoodComponentsAnalysis", "PCA", "kneighbors_graph"],
}

# the packages whose __all__ is their public surface
PACKAGES = ["fastdr.neighbors", "fastdr.decomposition", "fastdr.discriminant",
            "fastdr.manifold", "fastdr.metric_learning", "fastdr.dask"]

PATHS = [(module, name) for module, names in PUBLIC.items() for name in names]


def _run(code):
    """Run ``code`` in a fresh interpreter (so nothing is imported yet); return its stdout."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("module,name", PATHS)
def test_public_name_imports(module, name):
    value = getattr(importlib.import_module(module), name)
    assert callable(value)
    assert not name.startswith("_")


def test_top_level_names_are_the_subpackages_objects():
    for module, names in PUBLIC.items():
        if module in ("fastdr", "fastdr.dask"):
            continue
        for name in names:
            if name in PUBLIC["fastdr"]:
                assert getattr(fastdr, name) is getattr(importlib.import_module(module), name)


def test_every_path_imports_as_a_from_statement_in_a_fresh_interpreter():
    lines = [f"from {module} import {', '.join(names)}" for module, names in PUBLIC.items()]
    lines.append("print('ok')")
    assert _run("\n".join(lines)).strip() == "ok"


def test_star_imports_give_exactly_the_public_names():
    code = "\n".join(
        [f"ns = {{}}\nexec('from {module} import *', ns)\n"
         f"print('{module}', sorted(k for k in ns if k != '__builtins__'))"
         for module in ["fastdr", *PACKAGES]])
    got = dict(line.split(" ", 1) for line in _run(code).splitlines())
    for module in ["fastdr", *PACKAGES]:
        assert got[module] == str(sorted(PUBLIC[module])), module


def test_import_fastdr_imports_no_kernel_and_no_sklearn():
    code = (
        "import sys\n"
        "import fastdr\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('fastdr', 'sklearn',"
        " 'numba', 'llvmlite')))\n"
    )
    assert _run(code).strip() == str(["fastdr", "fastdr.exceptions"])


def test_all_lists_exactly_the_public_names_of_each_package():
    assert sorted(fastdr.__all__) == sorted(PUBLIC["fastdr"])
    assert set(fastdr.__all__) == set(fastdr._EXPORTS) | set(EXCEPTIONS)
    for module in PACKAGES:
        package = importlib.import_module(module)
        defined = sorted(name for name, value in vars(package).items()
                         if not name.startswith("_") and not isinstance(value, types.ModuleType))
        assert sorted(package.__all__) == defined, module
        assert sorted(package.__all__) == sorted(PUBLIC[module]), module
