"""The public names: each public package's ``__all__`` lists exactly its public objects, all
of them exported from ``fastdr``; the public errors are importable from ``fastdr``."""

import importlib

import numpy as np
import pytest

import fastdr
import fastdr.exceptions

PACKAGES = ["fastdr.decomposition", "fastdr.discriminant", "fastdr.manifold",
            "fastdr.metric_learning", "fastdr.neighbors"]
ERRORS = {"ConvergenceWarning", "DataConversionWarning", "EigenSolverError",
          "InvalidParameterError", "MemoryBudgetError", "NotFittedError"}


@pytest.mark.parametrize("name", PACKAGES)
def test_a_package_all_lists_public_names_each_exported_from_fastdr(name):
    package = importlib.import_module(name)
    assert len(set(package.__all__)) == len(package.__all__)
    for attr in package.__all__:
        assert not attr.startswith("_"), f"{name}.__all__ lists the private name {attr}"
        assert getattr(fastdr, attr) is getattr(package, attr)
        assert fastdr._EXPORTS[attr] == name


def test_fastdr_all_is_the_lazy_table_and_the_errors():
    assert len(set(fastdr.__all__)) == len(fastdr.__all__)
    assert set(fastdr.__all__) == set(fastdr._EXPORTS) | ERRORS
    for name in ERRORS:
        assert getattr(fastdr, name) is getattr(fastdr.exceptions, name)


def test_eigen_solver_error_is_public_and_raised_where_it_was():
    from fastdr._eigen import EigenSolverError, symmetric_eigenpairs

    assert fastdr.EigenSolverError is EigenSolverError
    assert issubclass(fastdr.EigenSolverError, RuntimeError)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((200, 200))
    A = A + A.T
    with pytest.raises(fastdr.EigenSolverError,
                       match=r"eigen_solver='arpack' failed .*Try eigen_solver='dense'"):
        symmetric_eigenpairs(A, 3, solver="arpack", max_iter=1, random_state=0)
