"""PCA's finiteness check on dense float64 input comes from the column means (no own pass).

A NaN or an infinity makes its column's sum non-finite, so the explicit ``isfinite`` pass
runs only then; these tests pin that every non-finite entry is still refused with the usual
message, on every solver, and that finite values whose sums overflow reach the overflow
errors as before.
"""

import numpy as np
import pytest

from fastdr import PCA

SOLVERS = ["auto", "full", "covariance_eigh", "gram", "arpack", "randomized"]


@pytest.fixture
def X():
    return np.random.default_rng(0).standard_normal((60, 8))


@pytest.mark.parametrize("svd_solver", SOLVERS)
@pytest.mark.parametrize("entries", [[np.nan], [np.inf], [-np.inf], [np.inf, -np.inf]])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_any_non_finite_entry_is_refused(X, svd_solver, entries, dtype):
    bad = X.astype(dtype)
    for row, value in enumerate(entries):  # inf and -inf in one column: their sum is NaN
        bad[17 + row, 5] = value
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        PCA(n_components=2, svd_solver=svd_solver, random_state=0).fit(bad)


def test_the_check_reads_the_column_means_not_a_second_pass(X, monkeypatch):
    import fastdr.decomposition._pca as pca_module

    calls = []
    real = pca_module.check_finite
    monkeypatch.setattr(pca_module, "check_finite",
                        lambda arr, name: calls.append(name) or real(arr, name))
    PCA(n_components=2).fit(X)
    assert calls == []  # finite means: no isfinite pass
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        PCA(n_components=2).fit(bad)
    assert calls == ["X"]
    PCA(n_components=2).fit(X.astype(np.float32))  # float32 keeps the plain check
    assert calls == ["X", "X"]


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_finite_values_whose_sum_overflows_get_the_overflow_error(X):
    big = np.abs(X) * 1e307 + 1e307  # every entry finite, every column sum inf
    assert np.isfinite(big).all() and not np.isfinite(big.sum(axis=0)).any()
    with pytest.raises(ValueError, match=r"overflow float64: scale X first"):
        PCA(n_components=2).fit(big)
