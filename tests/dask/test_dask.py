"""fastdr.dask: every estimator equals the in-memory fastdr estimator on a LocalCluster."""

import os
import pickle
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster

import fastdr
import fastdr.dask as fdd

# -- fixtures (our own; nothing from distributed.utils_test) ---------------------------------


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as lc:
        yield lc


@pytest.fixture
def client(cluster):
    with Client(cluster) as c:
        yield c


def _data(m=300, d=5, seed=0, n_classes=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, m)
    X = rng.standard_normal((m, d)) * np.linspace(1, 3, d) + 10.0
    X += y[:, None] * 0.7
    return X, y


def _procrustes_equal(A, B, atol):
    """Columns of A and B agree up to sign."""
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A * signs, B, atol=atol, rtol=0)


# -- shape of the package --------------------------------------------------------------------


def test_import_fastdr_does_not_import_dask():
    code = ("import sys, fastdr; fastdr.PCA; fastdr.NearestNeighbors; "
            "assert not any(n == 'dask' or n.startswith('dask.') for n in sys.modules), "
            "sorted(n for n in sys.modules if n.startswith('dask'))")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_numpy_input_is_refused_with_the_in_memory_estimator_named():
    X, _ = _data()
    with pytest.raises(TypeError, match=r"fastdr\.NearestNeighbors"):
        fdd.NearestNeighbors().fit(X)
    with pytest.raises(TypeError, match=r"fastdr\.PCA"):
        fdd.PCA().fit(X)


class _FrameStandIn:
    """The one method fastdr.dask uses of a dask DataFrame (pyarrow, which dask.dataframe
    needs, is not a test dependency)."""

    def __init__(self, array):
        self._array = array
        self.calls = []

    def to_dask_array(self, lengths=None):
        self.calls.append(lengths)
        return self._array


def test_dataframe_input_goes_through_to_dask_array_with_lengths(client):
    X, _ = _data(m=120, d=3)
    frame = _FrameStandIn(da.from_array(X, chunks=(40, 3)))
    pca = fdd.PCA(n_components=2).fit(frame)
    assert frame.calls == [True]
    np.testing.assert_allclose(pca.explained_variance_,
                               fastdr.PCA(n_components=2).fit(X).explained_variance_, rtol=1e-10)


def test_unknown_chunk_sizes_are_refused():
    X, _ = _data()
    Xd = da.from_array(X, chunks=(100, 5))
    Xd = Xd[Xd[:, 0] > -np.inf]
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        fdd.PCA().fit(Xd)


def test_nan_in_a_block_raises_at_compute():
    X, _ = _data()
    X[250, 1] = np.nan
    Xd = da.from_array(X, chunks=(100, 5))
    with pytest.raises(ValueError, match="NaN"):
        fdd.PCA().fit(Xd)


def test_features_are_rechunked_into_one_chunk(client):
    X, _ = _data(d=6)
    Xd = da.from_array(X, chunks=(80, 2))
    ind = fdd.NearestNeighbors(n_neighbors=3).fit(Xd).kneighbors(return_distance=False)
    ref = fastdr.NearestNeighbors(n_neighbors=3).fit(X).kneighbors(return_distance=False)
    np.testing.assert_array_equal(ind.compute(), ref)


# -- nearest neighbours ----------------------------------------------------------------------


@pytest.mark.parametrize("broadcast", [True, False])
@pytest.mark.parametrize("algorithm,d", [("brute", 20), ("brute", 4), ("kd_tree", 4)])
def test_kneighbors_equals_in_memory(client, broadcast, algorithm, d):
    X, _ = _data(m=400, d=d, seed=1)
    Xd = da.from_array(X, chunks=(90, d))
    nn = fdd.NearestNeighbors(n_neighbors=6, algorithm=algorithm,
                              broadcast_index=broadcast).fit(Xd)
    ref = fastdr.NearestNeighbors(n_neighbors=6, algorithm=algorithm).fit(X)
    dist, ind = nn.kneighbors()
    assert isinstance(ind, da.Array) and ind.chunks[0] == Xd.chunks[0]
    dist, ind = dask.compute(dist, ind)
    ref_dist, ref_ind = ref.kneighbors()
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-12, atol=0)
    Q = X[:123] + 0.01
    dist, ind = dask.compute(*nn.kneighbors(da.from_array(Q, chunks=(50, d))))
    ref_dist, ref_ind = ref.kneighbors(Q)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-12, atol=0)


def test_kneighbors_ties_and_duplicates_follow_the_index_order(client):
    X = np.repeat(np.arange(12.0)[:, None], 3, axis=0) @ np.ones((1, 3))
    Xd = da.from_array(X, chunks=(7, 3))
    for broadcast in (True, False):
        nn = fdd.NearestNeighbors(n_neighbors=4, algorithm="brute",
                                  broadcast_index=broadcast).fit(Xd)
        ind = nn.kneighbors(return_distance=False).compute()
        ref = fastdr.NearestNeighbors(n_neighbors=4, algorithm="brute").fit(X)
        np.testing.assert_array_equal(ind, ref.kneighbors(return_distance=False))


def test_kneighbors_float32_keeps_dtype(client):
    X, _ = _data(m=200, d=18)
    X = X.astype(np.float32)
    Xd = da.from_array(X, chunks=(64, 18))
    dist, ind = dask.compute(*fdd.NearestNeighbors(n_neighbors=3, broadcast_index=False)
                             .fit(Xd).kneighbors())
    ref_dist, ref_ind = fastdr.NearestNeighbors(n_neighbors=3).fit(X).kneighbors()
    assert dist.dtype == np.float32
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_array_equal(dist, ref_dist)


def test_kneighbors_mahalanobis_metric(client):
    X, _ = _data(m=150, d=4)
    rng = np.random.default_rng(3)
    B = rng.standard_normal((4, 4))
    params = {"M": B @ B.T + np.eye(4)}
    Xd = da.from_array(X, chunks=(40, 4))
    ind = fdd.NearestNeighbors(n_neighbors=5, metric="mahalanobis", metric_params=params,
                               broadcast_index=False).fit(Xd).kneighbors(
        return_distance=False).compute()
    ref = fastdr.NearestNeighbors(n_neighbors=5, metric="mahalanobis",
                                  metric_params=params).fit(X)
    np.testing.assert_array_equal(ind, ref.kneighbors(return_distance=False))


@pytest.mark.parametrize("include_self", [False, True])
def test_kneighbors_graph_is_a_csr_on_the_client(client, include_self):
    X, _ = _data(m=200, d=3)
    Xd = da.from_array(X, chunks=(45, 3))
    G = fdd.kneighbors_graph(Xd, 5, mode="distance", include_self=include_self,
                             broadcast_index=False)
    ref = fastdr.kneighbors_graph(X, 5, mode="distance", include_self=include_self)
    assert G.format == "csr" and G.shape == (200, 200)
    np.testing.assert_array_equal(G.indices, ref.indices)
    np.testing.assert_array_equal(G.indptr, ref.indptr)
    np.testing.assert_allclose(G.data, ref.data, rtol=1e-12)


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_kneighbors_classifier_and_regressor(client, weights):
    X, y = _data(m=300, d=4, seed=2)
    Xd = da.from_array(X, chunks=(70, 4))
    Q = X[::3] + 0.05
    Qd = da.from_array(Q, chunks=(33, 4))
    clf = fdd.KNeighborsClassifier(n_neighbors=7, weights=weights).fit(Xd, da.from_array(y))
    ref = fastdr.KNeighborsClassifier(n_neighbors=7, weights=weights).fit(X, y)
    labels = clf.predict(Qd)
    assert isinstance(labels, da.Array) and labels.chunks[0] == Qd.chunks[0]
    np.testing.assert_array_equal(labels.compute(), ref.predict(Q))
    np.testing.assert_allclose(clf.predict_proba(Qd).compute(), ref.predict_proba(Q),
                               rtol=1e-12)
    target = np.column_stack([X[:, 0] ** 2, y])
    reg = fdd.KNeighborsRegressor(n_neighbors=4, weights=weights).fit(Xd, target)
    ref_reg = fastdr.KNeighborsRegressor(n_neighbors=4, weights=weights).fit(X, target)
    np.testing.assert_allclose(reg.predict(Qd).compute(), ref_reg.predict(Q), rtol=1e-12)


def test_broadcast_auto_follows_the_worker_memory_limit(client, monkeypatch):
    from fastdr.dask import _neighbors

    X, _ = _data(m=100, d=3)
    nn = fdd.NearestNeighbors(n_neighbors=2).fit(da.from_array(X, chunks=(30, 3)))
    assert nn._use_broadcast() is True
    monkeypatch.setattr(_neighbors, "BROADCAST_MEMORY_FRACTION", 1e-12)
    assert nn._use_broadcast() is False
    assert fdd.NearestNeighbors(broadcast_index=True).fit(
        da.from_array(X, chunks=(30, 3)))._use_broadcast() is True


def test_query_with_other_feature_count_is_refused():
    X, _ = _data(m=50, d=3)
    nn = fdd.NearestNeighbors(n_neighbors=2).fit(da.from_array(X, chunks=(20, 3)))
    with pytest.raises(ValueError, match="X has 4 features, but NearestNeighbors is expecting 3"):
        nn.kneighbors(da.zeros((5, 4), chunks=(5, 4)))


# -- PCA and LDA -----------------------------------------------------------------------------


@pytest.mark.parametrize("n_components", [None, 3, 0.9])
@pytest.mark.parametrize("whiten", [False, True])
def test_pca_equals_in_memory(client, n_components, whiten):
    X, _ = _data(m=500, d=6, seed=4)
    X = X + 1e3  # far from the origin: the shifted float64 moments must not cancel
    Xd = da.from_array(X, chunks=(77, 6))
    pca = fdd.PCA(n_components=n_components, whiten=whiten).fit(Xd)
    ref = fastdr.PCA(n_components=n_components, whiten=whiten).fit(X)
    assert pca.n_components_ == ref.n_components_
    for name in ("mean_", "explained_variance_", "explained_variance_ratio_",
                 "singular_values_"):
        np.testing.assert_allclose(getattr(pca, name), getattr(ref, name), rtol=1e-8)
    _procrustes_equal(pca.components_.T, ref.components_.T, 1e-8)
    Z = pca.transform(Xd)
    assert isinstance(Z, da.Array) and Z.chunks[0] == Xd.chunks[0]
    _procrustes_equal(Z.compute(), ref.transform(X), 1e-8)
    back = pca.inverse_transform(Z).compute()
    np.testing.assert_allclose(back, ref.inverse_transform(ref.transform(X)), rtol=1e-8)


@pytest.mark.parametrize("shrinkage", [None, 0.3, "auto"])
@pytest.mark.parametrize("n_classes", [2, 4])
def test_lda_equals_in_memory(client, shrinkage, n_classes):
    X, y = _data(m=400, d=5, seed=5, n_classes=n_classes)
    Xd = da.from_array(X, chunks=(60, 5))
    lda = fdd.LinearDiscriminantAnalysis(shrinkage=shrinkage).fit(Xd, y)
    ref = fastdr.LinearDiscriminantAnalysis(solver="eigen", shrinkage=shrinkage).fit(X, y)
    for name in ("means_", "priors_", "covariance_", "coef_", "intercept_",
                 "explained_variance_ratio_"):
        np.testing.assert_allclose(getattr(lda, name), getattr(ref, name), rtol=1e-8,
                                   atol=1e-10)
    k = ref.n_components_
    _procrustes_equal(lda.scalings_[:, :k], ref.scalings_[:, :k], 1e-8)
    _procrustes_equal(lda.transform(Xd).compute(), ref.transform(X), 1e-8)
    np.testing.assert_array_equal(lda.predict(Xd).compute(), ref.predict(X))
    np.testing.assert_allclose(lda.predict_proba(Xd).compute(), ref.predict_proba(X),
                               rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(lda.decision_function(Xd).compute(),
                               ref.decision_function(X), rtol=1e-8, atol=1e-9)


@pytest.mark.parametrize("shrinkage", [None, "auto"])
def test_lda_with_priors_equals_in_memory(client, shrinkage):
    # the in-memory eigen solver's S_b is scikit-learn's S_t - S_w: with priors (and with
    # Ledoit-Wolf, a second pass for the total data's fourth moment) the Dask fit must match
    X, y = _data(m=300, d=4, seed=7, n_classes=3)
    Xd = da.from_array(X, chunks=(70, 4))
    priors = [0.2, 0.3, 0.5]
    lda = fdd.LinearDiscriminantAnalysis(shrinkage=shrinkage, priors=priors).fit(Xd, y)
    ref = fastdr.LinearDiscriminantAnalysis(solver="eigen", shrinkage=shrinkage,
                                            priors=priors).fit(X, y)
    np.testing.assert_allclose(lda.explained_variance_ratio_, ref.explained_variance_ratio_,
                               rtol=1e-8)
    _procrustes_equal(lda.transform(Xd).compute(), ref.transform(X), 1e-8)


# -- faults: chunking, pickling --------------------------------------------------------------

_CHUNKINGS = [(300,), (1, 99, 150, 50), (37,) * 8 + (4,), (150, 0, 1, 149)]


@pytest.mark.parametrize("chunks", _CHUNKINGS)
def test_results_do_not_depend_on_chunking(client, chunks):
    X, y = _data(m=300, d=4, seed=6)
    Xd = da.from_array(X, chunks=(chunks, 4))
    ind = fdd.NearestNeighbors(n_neighbors=5, broadcast_index=False).fit(Xd).kneighbors(
        return_distance=False).compute()
    np.testing.assert_array_equal(
        ind, fastdr.NearestNeighbors(n_neighbors=5).fit(X).kneighbors(return_distance=False))
    pca = fdd.PCA(n_components=2).fit(Xd)
    ref = fastdr.PCA(n_components=2).fit(X)
    np.testing.assert_allclose(pca.explained_variance_, ref.explained_variance_, rtol=1e-10)
    _procrustes_equal(pca.transform(Xd).compute(), ref.transform(X), 1e-8)
    lda = fdd.LinearDiscriminantAnalysis().fit(Xd, y)
    ref_lda = fastdr.LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    np.testing.assert_allclose(lda.coef_, ref_lda.coef_, rtol=1e-9)
    np.testing.assert_array_equal(lda.predict(Xd).compute(), ref_lda.predict(X))
    iso = fdd.Isomap(n_neighbors=6, n_landmarks=20, random_state=0).fit(Xd)
    ref_iso = fastdr.Isomap(n_neighbors=6, n_landmarks=20, random_state=0).fit(X)
    _procrustes_equal(iso.embedding_, ref_iso.embedding_, 1e-8)


def test_fitted_estimators_pickle(client):
    X, y = _data(m=200, d=4)
    Xd = da.from_array(X, chunks=(50, 4))
    for est in (fdd.NearestNeighbors(n_neighbors=3).fit(Xd),
                fdd.KNeighborsClassifier(n_neighbors=3).fit(Xd, y),
                fdd.PCA(n_components=2).fit(Xd),
                fdd.LinearDiscriminantAnalysis().fit(Xd, y),
                fdd.Isomap(n_neighbors=6, n_landmarks=10, random_state=0).fit(Xd)):
        clone = pickle.loads(pickle.dumps(est))
        if hasattr(est, "kneighbors"):
            a = est.kneighbors(return_distance=False).compute()
            b = clone.kneighbors(return_distance=False).compute()
        elif hasattr(est, "predict"):
            a, b = est.predict(Xd).compute(), clone.predict(Xd).compute()
        else:
            a, b = est.transform(Xd).compute(), clone.transform(Xd).compute()
        np.testing.assert_array_equal(a, b)


# -- NCA -------------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:.*did not converge")
@pytest.mark.parametrize("init,n_components", [("auto", 2), ("identity", None)])
def test_nca_equals_in_memory(client, init, n_components):
    X, y = _data(m=240, d=4, seed=7)
    Xd = da.from_array(X, chunks=(50, 4))
    kwargs = {"init": init, "n_components": n_components, "max_iter": 15}
    nca = fdd.NeighborhoodComponentsAnalysis(**kwargs).fit(Xd, y)
    ref = fastdr.NeighborhoodComponentsAnalysis(**kwargs).fit(X, y)
    assert nca.n_iter_ == ref.n_iter_
    # the tolerance: equal to the in-memory result to 1e-8 (relative). The chunk sums
    # are the in-memory kernel's, merged in its order, and agree bit for bit on most runs;
    # a fresh-clone CI run once differed by 7e-11 relative (BLAS rounding in a worker)
    np.testing.assert_allclose(nca.components_, ref.components_, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(nca.objective_, ref.objective_, rtol=1e-8)
    Z = nca.transform(Xd)
    assert isinstance(Z, da.Array) and Z.chunks[0] == Xd.chunks[0]
    expected = ref.transform(X)
    # relative to the embedding's scale (entries up to ~4e3 here): a component that is 1e-8
    # relative off moves a near-zero coordinate by more than an absolute 1e-8
    np.testing.assert_allclose(Z.compute(), expected, rtol=1e-8,
                               atol=1e-8 * np.abs(expected).max())


# -- Isomap ----------------------------------------------------------------------------------


def _swiss_roll(m=500, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 3 * np.pi, m)
    return np.column_stack([t * np.cos(t), rng.uniform(0, 5, m), t * np.sin(t)])


def test_landmark_isomap_equals_in_memory(client):
    X = _swiss_roll()
    Xd = da.from_array(X, chunks=(90, 3))
    iso = fdd.Isomap(n_neighbors=8, n_landmarks=40, random_state=0).fit(Xd)
    ref = fastdr.Isomap(n_neighbors=8, n_landmarks=40, random_state=0).fit(X)
    np.testing.assert_array_equal(iso.landmarks_, ref.landmarks_)
    np.testing.assert_allclose(iso.eigenvalues_, ref.eigenvalues_, rtol=1e-10)
    _procrustes_equal(iso.embedding_, ref.embedding_, 1e-8)
    Q = X[::7] + 0.05
    Z = iso.transform(da.from_array(Q, chunks=(25, 3)))
    assert isinstance(Z, da.Array) and Z.chunks[0] == (25, 25, 22)
    _procrustes_equal(Z.compute(), ref.transform(Q), 1e-8)
    lazy = fdd.Isomap(n_neighbors=8, n_landmarks=40, random_state=0).fit_transform(Xd)
    assert isinstance(lazy, da.Array) and lazy.chunks[0] == Xd.chunks[0]
    _procrustes_equal(lazy.compute(), ref.embedding_, 1e-8)


def test_isomap_without_landmarks_is_refused_with_the_reason():
    Xd = da.from_array(_swiss_roll(100), chunks=(30, 3))
    with pytest.raises(ValueError, match=r"100 x 100 geodesic matrix.*n_landmarks=L"):
        fdd.Isomap(n_neighbors=5).fit(Xd)


# -- faults: a worker killed in the middle of kneighbors -------------------------------------


def _worker_pid(cluster, address):
    for nanny in cluster.workers.values():
        if nanny.worker_address == address:
            return nanny.process.process.pid
    raise LookupError(address)


def _kill_a_busy_worker(cluster, client, timeout=60):
    """SIGKILL the worker process holding the most keys once one holds 3; return its address."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        held = {w: len(keys) for w, keys in client.has_what().items()}
        busy = [w for w, n in held.items() if n >= 3]
        if busy:
            victim = max(busy, key=held.get)
            os.kill(_worker_pid(cluster, victim), signal.SIGKILL)
            return victim
        time.sleep(0.02)
    return None


@pytest.mark.jit_only  # interpreted (coverage pass) it takes most of a minute or more
def test_worker_killed_mid_kneighbors_or_isomap_fit_gives_the_same_result():
    X, _ = _data(m=1200, d=20, seed=8)
    Xd = da.from_array(X, chunks=(60, 20))
    ref = fastdr.NearestNeighbors(n_neighbors=5).fit(X).kneighbors(return_distance=False)
    R = _swiss_roll(800, seed=3)
    Rd = da.from_array(R, chunks=(40, 3))
    ref_iso = fastdr.Isomap(n_neighbors=8, n_landmarks=48, random_state=1).fit(R)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as lc, Client(lc) as c:
        c.wait_for_workers(2, timeout=60)
        ind = fdd.NearestNeighbors(n_neighbors=5, broadcast_index=False).fit(Xd).kneighbors(
            return_distance=False)
        future = c.compute(ind)
        victim = _kill_a_busy_worker(lc, c)
        assert victim is not None, "no worker started on the kneighbors tasks within 60 s"
        assert not future.done(), "kneighbors finished before a worker could be killed"
        result = future.result(timeout=180)
        assert victim not in c.scheduler_info()["workers"]
        np.testing.assert_array_equal(result, ref)

        c.wait_for_workers(2, timeout=60)
        with ThreadPoolExecutor(1) as pool:
            killed = pool.submit(_kill_a_busy_worker, lc, c)
            iso = fdd.Isomap(n_neighbors=8, n_landmarks=48, random_state=1).fit(Rd)
            assert killed.result(timeout=60) is not None
    np.testing.assert_array_equal(iso.landmarks_, ref_iso.landmarks_)
    _procrustes_equal(iso.embedding_, ref_iso.embedding_, 1e-8)


def _threads_inside_a_task():
    import numba

    from fastdr._runtime.threads import parallel_section
    from fastdr.dask._utils import task_n_jobs

    with parallel_section(task_n_jobs(None)):
        return numba.get_num_threads()


@pytest.mark.jit_only  # interpreted, prange is range: one thread, nothing to compare
def test_tasks_use_their_workers_share_of_cores_and_run_concurrently():
    X, _ = _data(m=600, d=20, seed=9)
    Xd = da.from_array(X, chunks=(50, 20))
    ref = fastdr.NearestNeighbors(n_neighbors=4).fit(X).kneighbors()
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                      dashboard_address=":0") as lc, Client(lc) as c:
        assert c.submit(_threads_inside_a_task, pure=False).result(timeout=60) == min(
            2, c.run(lambda: __import__("numba").config.NUMBA_NUM_THREADS).popitem()[1])
        for broadcast in (True, False):
            nn = fdd.NearestNeighbors(n_neighbors=4, broadcast_index=broadcast).fit(Xd)
            dist, ind = dask.compute(*nn.kneighbors())
            np.testing.assert_array_equal(ind, ref[1])
            np.testing.assert_array_equal(dist, ref[0])


def test_task_threads_follow_the_worker_in_the_module_cluster(client):
    workers = list(client.scheduler_info()["workers"])
    got = [client.submit(_threads_inside_a_task, workers=[w], pure=False).result(timeout=60)
           for w in workers]
    assert got == [1] * len(workers)
