"""fastdr.dask: the checks, errors and edge cases are the in-memory estimators' own."""

import dask.array as da
import numpy as np
import pytest

import fastdr
import fastdr.dask as fdd

from .test_dask import _data


@pytest.mark.parametrize("make, method", [
    (lambda: fdd.PCA(n_components=2), "transform"),
    (lambda: fdd.LinearDiscriminantAnalysis(), "transform"),
    (lambda: fdd.LinearDiscriminantAnalysis(), "predict"),
    (lambda: fdd.NeighborhoodComponentsAnalysis(n_components=2, max_iter=2), "transform"),
    (lambda: fdd.Isomap(n_neighbors=5, n_landmarks=10, random_state=0), "transform"),
    (lambda: fdd.KNeighborsClassifier(n_neighbors=2), "predict"),
    (lambda: fdd.KNeighborsRegressor(n_neighbors=2), "predict"),
])
@pytest.mark.filterwarnings("ignore:.*did not converge")
def test_every_method_refuses_another_feature_count(make, method):
    X, y = _data(m=50, d=3)
    est = make().fit(da.from_array(X, chunks=(20, 3)), y)
    name = type(est).__name__
    with pytest.raises(ValueError, match=f"X has 4 features, but {name} is expecting 3 "
                                         f"features.*columns to {method}"):
        getattr(est, method)(da.zeros((5, 4), chunks=(5, 4)))


def test_lazy_methods_pass_an_empty_row_block_through():
    X, y = _data(m=60, d=3)
    Xd = da.from_array(X, chunks=(30, 3))
    Q = da.from_array(X[:7], chunks=((0, 7), (3,)))  # an empty first block
    pca = fdd.PCA(n_components=2).fit(Xd)
    lda = fdd.LinearDiscriminantAnalysis().fit(Xd, y)
    Z = pca.transform(Q)
    np.testing.assert_allclose(Z.compute(), pca.to_local().transform(X[:7]))
    np.testing.assert_allclose(pca.inverse_transform(Z).compute(),
                               pca.to_local().inverse_transform(pca.to_local().transform(X[:7])))
    np.testing.assert_array_equal(lda.predict(Q).compute(), lda.to_local().predict(X[:7]))
    np.testing.assert_allclose(lda.predict_proba(Q).compute(),
                               lda.to_local().predict_proba(X[:7]))


@pytest.mark.parametrize("k, queries", [(10, False), (11, True)])
def test_kneighbors_too_many_neighbours_is_refused(k, queries):
    X, _ = _data(m=10, d=3)
    nn = fdd.NearestNeighbors(n_neighbors=k).fit(da.from_array(X, chunks=(4, 3)))
    local = fastdr.NearestNeighbors(n_neighbors=k).fit(X)
    with pytest.raises(ValueError, match=f"n_neighbors={k}") as expected:
        local.kneighbors(X if queries else None)
    with pytest.raises(ValueError) as got:
        nn.kneighbors(da.from_array(X, chunks=(4, 3)) if queries else None)
    assert str(got.value) == str(expected.value)  # the in-memory check and message


@pytest.mark.parametrize("estimator", ["KNeighborsClassifier", "KNeighborsRegressor"])
def test_weights_callable_checks_are_the_in_memory_ones(estimator):
    X, y = _data(m=40, d=3)
    Xd = da.from_array(X, chunks=(15, 3))
    Q = X[:6] + 0.1

    def zeros(dist):
        return np.zeros_like(dist)

    lazy = getattr(fdd, estimator)(n_neighbors=3, weights=zeros).fit(Xd, y)
    local = getattr(fastdr, estimator)(n_neighbors=3, weights=zeros).fit(X, y)
    with pytest.raises(ValueError, match="All neighbors of some sample") as expected:
        local.predict(Q)
    with pytest.raises(ValueError) as got:
        lazy.predict(da.from_array(Q, chunks=(6, 3))).compute(scheduler="sync")
    assert str(got.value) == str(expected.value)


def test_regressor_targets_near_the_float64_limit_do_not_overflow():
    X, _ = _data(m=30, d=3)
    y = np.full(30, 1.5e308)
    y[::2] = -1.7e308
    reg = fdd.KNeighborsRegressor(n_neighbors=4).fit(da.from_array(X, chunks=(10, 3)), y)
    ref = fastdr.KNeighborsRegressor(n_neighbors=4).fit(X, y)
    got = reg.predict(da.from_array(X[:8], chunks=(4, 3))).compute(scheduler="sync")
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got, ref.predict(X[:8]))


@pytest.mark.filterwarnings("ignore:.*did not converge")
def test_nca_callback_gets_the_flattened_map_as_in_memory():
    X, y = _data(m=80, d=3, seed=3)
    seen = {"dask": [], "memory": []}
    kwargs = {"n_components": 2, "max_iter": 3, "init": "identity"}
    fdd.NeighborhoodComponentsAnalysis(
        callback=lambda t, n: seen["dask"].append((t.shape, n)), **kwargs
    ).fit(da.from_array(X, chunks=(30, 3)), y)
    fastdr.NeighborhoodComponentsAnalysis(
        callback=lambda t, n: seen["memory"].append((t.shape, n)), **kwargs).fit(X, y)
    assert seen["dask"] == seen["memory"] and seen["dask"][0] == ((6,), 1)


@pytest.mark.parametrize("n_components", [2, 0.8, "mle", None])
def test_pca_equals_the_in_memory_covariance_route_and_scores(n_components):
    X, _ = _data(m=120, d=5, seed=4)
    ours = fdd.PCA(n_components=n_components).fit(da.from_array(X, chunks=(50, 5)))
    ref = fastdr.PCA(n_components=n_components, svd_solver="covariance_eigh").fit(X)
    assert ours.n_components_ == ref.n_components_
    np.testing.assert_allclose(ours.noise_variance_, ref.noise_variance_, rtol=1e-8)
    np.testing.assert_allclose(ours.to_local().score(X), ref.score(X), rtol=1e-8)
