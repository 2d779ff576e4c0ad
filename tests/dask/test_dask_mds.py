"""fastdr.dask.ClassicalMDS: landmark MDS on the workers, equal to the in-memory landmark
MDS with the same random_state, and the errors of what does not distribute."""

import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster

import fastdr
import fastdr.dask as fdd


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as c:
        yield c


def _data(m=400, d=6, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal((m, d)).astype(dtype)


@pytest.mark.parametrize("metric,dtype", [("manhattan", np.float64), ("euclidean", np.float64),
                                          ("cosine", np.float32)])
def test_equals_in_memory_landmark_mds(client, metric, dtype):
    X, Q = _data(dtype=dtype), _data(70, seed=1, dtype=dtype)
    params = {"n_components": 3, "metric": metric, "n_landmarks": 50, "random_state": 0}
    ref = fastdr.ClassicalMDS(**params).fit(X)
    est = fdd.ClassicalMDS(**params).fit(da.from_array(X, chunks=(110, 6)))
    np.testing.assert_array_equal(est.landmarks_, ref.landmarks_)
    assert est.embedding_.dtype == ref.embedding_.dtype == dtype
    rtol = 1e-10 if dtype == np.float64 else 1e-5
    scale = float(np.abs(ref.embedding_).max())
    np.testing.assert_allclose(est.eigenvalues_, ref.eigenvalues_, rtol=rtol)
    np.testing.assert_allclose(est.embedding_, ref.embedding_, atol=rtol * scale)
    Z = est.transform(da.from_array(Q, chunks=(30, 6)))
    assert isinstance(Z, da.Array) and Z.chunks[0] == (30, 30, 10)
    np.testing.assert_allclose(Z.compute(), ref.transform(Q), atol=rtol * scale)


def test_fit_transform_is_the_embedding_in_the_row_chunks(client):
    X = _data()
    Xd = da.from_array(X, chunks=(150, 6))
    est = fdd.ClassicalMDS(2, metric="manhattan", n_landmarks=40, random_state=3)
    lazy = est.fit_transform(Xd)
    assert isinstance(lazy, da.Array) and lazy.chunks[0] == Xd.chunks[0]
    np.testing.assert_array_equal(lazy.compute(), est.embedding_)
    np.testing.assert_allclose(est.transform(Xd).compute(), est.embedding_, atol=1e-9)


def test_without_landmarks_is_refused_with_the_reason():
    Xd = da.from_array(_data(100), chunks=(30, 6))
    with pytest.raises(ValueError, match=r"100 x 100 matrix B.*n_landmarks=L"):
        fdd.ClassicalMDS().fit(Xd)


@pytest.mark.parametrize("params,message", [
    ({"landmark_method": "maxmin"}, "'maxmin' takes L passes over X"),
    ({"metric": "precomputed"}, "not a precomputed distance matrix"),
    ({"n_landmarks": 101}, r"n_landmarks=101 is larger than the number of embedded points"),
])
def test_what_does_not_distribute_is_refused(params, message):
    Xd = da.from_array(_data(100), chunks=(30, 6))
    with pytest.raises(ValueError, match=message):
        fdd.ClassicalMDS(**{"n_landmarks": 10, **params}).fit(Xd)


def test_numpy_input_points_to_the_in_memory_estimator():
    with pytest.raises(TypeError, match="For data in memory use fastdr.ClassicalMDS"):
        fdd.ClassicalMDS(n_landmarks=10).fit(_data(50))
