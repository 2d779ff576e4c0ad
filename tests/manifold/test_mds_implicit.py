"""Classical MDS with B never stored, ``ClassicalMDS(distance_storage="implicit")`` (issue
36): the stored route's and scikit-learn's embedding, no m x m array, the automatic choice
under the memory budget, and the errors of what it cannot do."""

import re

import numpy as np
import pytest
from sklearn.manifold import ClassicalMDS as SkClassicalMDS

import fastdr
from fastdr._eigen import implicit
from fastdr._kernels.spectral import distance_product
from fastdr.exceptions import MemoryBudgetError

from ..reference.manifold import procrustes_disparity


def _data(m=300, d=5, seed=0):
    return np.random.default_rng(seed).standard_normal((m, d))


def _fit(X, storage, **params):
    return fastdr.ClassicalMDS(distance_storage=storage, random_state=0, **params).fit(X)


@pytest.mark.jit_only  # many passes over m x m: compiled kernels only
@pytest.mark.parametrize("metric,solver,m", [("manhattan", "arpack", 400),
                                             ("chebyshev", "lobpcg", 400),
                                             ("cosine", "randomized", 1200),
                                             ("minkowski", "auto", 300),
                                             ("seuclidean", "arpack", 300),
                                             ("sqeuclidean", "arpack", 300)])
def test_implicit_equals_stored(metric, solver, m):
    X = _data(m)
    params = {"n_components": 3, "metric": metric, "eigen_solver": solver}
    if metric == "minkowski":
        params["metric_params"] = {"p": 3}
    if metric == "seuclidean":
        params["metric_params"] = {"V": np.linspace(0.5, 2.0, X.shape[1])}
    stored, free = _fit(X, "stored", **params), _fit(X, "implicit", **params)
    scale = stored.eigenvalues_.max()
    np.testing.assert_allclose(free.eigenvalues_, stored.eigenvalues_, atol=1e-10 * scale)
    np.testing.assert_allclose(free.embedding_, stored.embedding_,
                               atol=1e-9 * np.sqrt(scale))
    Q = _data(7, seed=1)
    np.testing.assert_allclose(free.transform(Q), stored.transform(Q),
                               atol=1e-9 * np.sqrt(scale))


@pytest.mark.jit_only  # many passes over m x m: compiled kernels only
def test_implicit_matches_scikit_learn():
    X = _data(400)
    free = _fit(X, "implicit", n_components=2, metric="manhattan")
    sk = SkClassicalMDS(2, metric="manhattan").fit(X)
    assert procrustes_disparity(free.embedding_, sk.embedding_) < 1e-12


@pytest.mark.jit_only  # many passes over m x m: compiled kernels only
@pytest.mark.parametrize("metric", ["cosine", "manhattan"])
def test_never_forms_an_m_by_m_array(monkeypatch, metric):
    X = _data(1500, 3)
    real = fastdr.ClassicalMDS._distances
    real_times = distance_product.distance_times
    shapes, accumulators = [], []

    def recording(self, A, B):
        shapes.append((A.shape[0], (A if B is None else B).shape[0]))
        return real(self, A, B)

    def recording_times(*args):
        accumulators.append(args[-1].nbytes)
        return real_times(*args)

    monkeypatch.setattr(fastdr.ClassicalMDS, "_distances", recording)
    monkeypatch.setattr(distance_product, "distance_times", recording_times)
    monkeypatch.setattr(implicit, "BLOCK_BYTES", 8 * 1500 * 200)  # 200-row blocks
    monkeypatch.setattr(implicit, "ACCUMULATOR_BYTES", 8 * 1500 * 5 * 3)
    _fit(X, "implicit", n_components=2, metric=metric, eigen_solver="arpack")
    if metric == "manhattan":  # the fused product: tiles and at most 3 accumulators
        assert not shapes and accumulators and max(accumulators) <= 8 * 1500 * 5 * 3
    else:
        assert shapes and max(a * b for a, b in shapes) <= 200 * 1500


@pytest.mark.jit_only  # many passes over m x m: compiled kernels only
def test_auto_goes_implicit_when_the_distances_do_not_fit(capsys):
    X = _data(800)
    stored = _fit(X, "auto", n_components=2, metric="manhattan")
    with fastdr.config_context(memory_budget=800 * 800 * 8 - 1):
        auto = _fit(X, "auto", n_components=2, metric="manhattan", verbose=1)
        assert "never stored" in capsys.readouterr().out
        with pytest.raises(MemoryBudgetError, match=re.escape(
                "Pass distance_storage='implicit' (the matrix is never stored")):
            _fit(X, "stored", n_components=2, metric="manhattan")
        # a variance share needs the whole spectrum: the budget error stands
        with pytest.raises(MemoryBudgetError, match="distance_storage='implicit'"):
            _fit(X, "auto", n_components=0.9, metric="manhattan")
    np.testing.assert_allclose(auto.embedding_, stored.embedding_, atol=1e-9)


@pytest.mark.parametrize("params", [{"n_components": 0.5},
                                    {"n_components": 2, "eigen_solver": "dense"}])
def test_what_implicit_cannot_do_is_a_clear_error(params):
    with pytest.raises(ValueError, match=re.escape(
            "distance_storage='implicit' computes a few eigenpairs with an iterative "
            "eigensolver; it cannot run with n_components=")):
        _fit(_data(), "implicit", metric="manhattan", **params)


def test_bad_distance_storage_is_refused():
    with pytest.raises(fastdr.exceptions.InvalidParameterError,
                       match="The 'distance_storage' parameter of ClassicalMDS must be"):
        _fit(_data(), "disk")


@pytest.mark.jit_only  # many passes over m x m: compiled kernels only
def test_bit_identical_for_any_n_jobs():
    X = _data(2500, 4)
    fits = [_fit(X, "implicit", n_components=2, metric="manhattan", n_jobs=n)
            for n in (1, 2)]
    np.testing.assert_array_equal(fits[0].embedding_, fits[1].embedding_)


def test_overflowing_squares_are_caught_before_the_solver():
    def huge(a, b):  # finite distances whose squares overflow
        return 1e200 * float(np.abs(a - b).sum())

    with pytest.raises(ValueError, match="The squared distance matrix has non-finite"):
        _fit(_data(30), "implicit", n_components=2, metric=huge)
    with pytest.raises(ValueError, match="X holds values too large to compute distances"):
        _fit(_data() * 1e160, "implicit", n_components=2, metric="chebyshev")


def test_small_implicit_equals_stored():
    # the one comparison small enough for the interpreted kernels of the coverage pass
    X = _data(60, 3)
    stored = _fit(X, "stored", n_components=2, metric="manhattan", eigen_solver="arpack")
    free = _fit(X, "implicit", n_components=2, metric="manhattan", eigen_solver="arpack")
    np.testing.assert_allclose(free.embedding_, stored.embedding_, atol=1e-10)
