"""NN-descent approximate k-NN graphs: recall, determinism, exact distances, queries, errors."""

import sys
import types

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from fastdr import NearestNeighbors
from fastdr._kernels.codes import MANHATTAN, SQEUCLIDEAN
from fastdr.neighbors._nndescent import (
    NNDescentIndex,
    _sample_recall,
    default_parameters,
    nndescent_graph,
    nndescent_index,
    nndescent_query,
    widened_neighbors,
)


def clustered(m, d=50, *, intrinsic=10, n_clusters=20, seed=0, dtype=np.float64):
    """Gaussian clusters, each spread over its own random ``intrinsic``-dim subspace."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(n_clusters, d))
    label = rng.integers(0, n_clusters, m)
    bases = rng.normal(size=(n_clusters, intrinsic, d)) / np.sqrt(intrinsic)
    spread = np.einsum("mi,mid->md", rng.normal(size=(m, intrinsic)), bases[label])
    return (centres[label] + spread + 0.05 * rng.normal(size=(m, d))).astype(dtype)


def uniform_subspace(m, d=50, *, intrinsic=10, seed=0):
    """Uniform points of the unit cube in ``intrinsic`` dims, rotated into R^d."""
    rng = np.random.default_rng(seed)
    rotation = np.linalg.qr(rng.normal(size=(d, intrinsic)))[0].T
    return rng.uniform(size=(m, intrinsic)) @ rotation


def blobs(m, d=50, *, seed=0):
    """Isotropic Gaussian blobs: full-dimensional clusters, the hard case for NN-descent."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(20, d))
    return centres[rng.integers(0, 20, m)] + rng.normal(size=(m, d))


def recall(found, exact):
    k = exact.shape[1]
    return np.mean([np.intersect1d(a, b).size for a, b in zip(found, exact, strict=True)]) / k


def brute(X, Q, k, metric, self_query):
    """Reference k-NN by scipy's cdist, ties by index; drops each point itself."""
    D = cdist(Q, X, metric="cityblock" if metric == "manhattan" else metric)
    if self_query:
        np.fill_diagonal(D, np.inf)
    order = np.lexsort((np.broadcast_to(np.arange(X.shape[0]), D.shape), D), axis=-1)[:, :k]
    return np.take_along_axis(D, order, 1), order


def uniform_cube(m, d=50, *, seed=0):
    """Uniform points of the full d-dimensional unit cube: the hardest case (intrinsic d)."""
    return np.random.default_rng(seed).random((m, d))


@pytest.mark.jit_only  # m=20,000 interpreted would take most of the coverage pass
@pytest.mark.parametrize("make", [clustered, uniform_subspace, blobs, uniform_cube])
def test_recall_at_defaults_m20000_clustered_and_uniform(make):
    # the full 50-d cube has recall about 0.76 at width k: the build widens its heaps
    # because the recall it estimates on sampled points misses the goal
    k = 10
    X = make(20000).astype(np.float32)
    exact = NearestNeighbors(n_neighbors=k, algorithm="brute").fit(X).kneighbors()[1]
    _, ind = nndescent_graph(X, k, random_state=0)
    assert recall(ind, exact) >= 0.95


@pytest.mark.jit_only  # the heavier setting at m=3,000; smaller tests cover the same lines
@pytest.mark.parametrize("make", [blobs, uniform_cube])
def test_recall_heavier_setting_reaches_099(make):
    # the heavier setting documented in nndescent_graph's Notes
    X = make(3000)
    k = 10
    exact = NearestNeighbors(n_neighbors=k, algorithm="brute").fit(X).kneighbors()[1]
    _, ind = nndescent_graph(X, k, build_neighbors=60, max_candidates=45, random_state=0)
    assert recall(ind, exact) >= 0.99


def test_widened_neighbors():
    assert widened_neighbors(10, 20000, 0.9) == 30  # 2 max(k, 15)
    assert widened_neighbors(10, 20000, 0.5) == 45  # 3 max(k, 15) when far from the goal
    assert widened_neighbors(20, 20000, 0.9) == 40
    assert widened_neighbors(30, 20000, 0.5) == 60  # at most max(k, 60)
    assert widened_neighbors(80, 20000, 0.5) == 80
    assert widened_neighbors(10, 25, 0.5) == 24  # at most m - 1


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
def test_sample_recall_counts_exact_neighbours_in_the_heaps(metric):
    X = blobs(400, 6, seed=2)
    key = MANHATTAN if metric == "manhattan" else SQEUCLIDEAN
    _, exact = brute(X, X, 5, metric, True)
    rows = np.array([0, 7, 100, 399])
    heap_i = np.full((400, 8), np.iinfo(np.int64).max, dtype=np.int64)
    heap_i[:, :5] = exact
    assert _sample_recall(X, key, rows, heap_i, 5, 1) == 1.0
    heap_i[7, [0, 3]] = 399  # two of row 7's five neighbours lost
    heap_i[100, 5] = exact[100, 0]  # moved past the first k slots: still held, counts once
    heap_i[100, 0] = 398 if 398 not in exact[100] else 397
    heap_i[100, 1] = exact[100, 0]
    assert _sample_recall(X, key, rows, heap_i, 5, 1) == pytest.approx(17 / 20)


def test_duplicate_points_in_the_recall_sample():
    # a duplicate of a sampled row, ranked before the row itself, is one of its neighbours
    X = np.repeat(blobs(100, 4, seed=1), 2, axis=0)
    heap_i = np.tile(np.arange(3), (200, 1))
    rows = np.array([1])
    _, exact = brute(X, X, 3, "euclidean", True)
    heap_i[1] = exact[1]
    assert _sample_recall(X, SQEUCLIDEAN, rows, heap_i, 3, 1) == 1.0


@pytest.mark.jit_only  # interpreted (coverage pass) it takes most of a minute or more
@pytest.mark.parametrize("make, widened", [(uniform_cube, True), (uniform_subspace, False)])
def test_build_widens_heaps_when_the_estimated_recall_misses_the_goal(make, widened, capsys):
    # one tree of small leaves: at width 10 the 30-d cube stays near recall 0.83 (so the
    # heaps are widened 3 k), the 10-d subspace reaches 0.98
    X = make(3000, 30, seed=3)
    _, ind = nndescent_graph(X, 10, n_trees=1, leaf_size=20, random_state=0, verbose=2)
    out = capsys.readouterr().out
    assert "NN-descent round" in out and "estimated on 512 sampled points" in out
    assert ("continued 3000 x 45 heaps" in out) is widened
    assert recall(ind, brute(X, X, 10, "euclidean", True)[1]) >= 0.95


def test_a_second_widening_goes_to_the_widest_heaps(capsys, monkeypatch):
    # an estimate >= 0.85 widens to 2 max(k, 15); still short of the goal, the next step
    # must be 3 max(k, 15), not the same width again
    import fastdr.neighbors._nndescent as module

    estimates = iter([0.9, 0.9, 0.99])
    monkeypatch.setattr(module, "_sample_recall", lambda *args: next(estimates))
    X = uniform_cube(100, 10, seed=2)
    nndescent_graph(X, 10, n_trees=1, leaf_size=20, random_state=0, verbose=2)
    out = capsys.readouterr().out
    assert "continued 100 x 30 heaps" in out and "continued 100 x 45 heaps" in out


def test_no_widening_with_build_neighbors_given(capsys):
    X = uniform_cube(1000, 30, seed=3)
    nndescent_graph(X, 5, n_trees=1, leaf_size=20, build_neighbors=5, random_state=0,
                    verbose=2)
    out = capsys.readouterr().out
    assert "estimated" not in out and "continued" not in out


@pytest.mark.jit_only  # m >= 1,500: minutes when interpreted (coverage pass)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_graph_for_one_and_two_threads(dtype):
    # small leaves: the graph is approximate, so it depends on the seed (the default
    # 1024-point leaves would hold all 3,000 points in three leaves and be nearly exact)
    X = blobs(3000, 20, seed=1).astype(dtype)
    kw = {"n_trees": 3, "leaf_size": 60}
    d1, i1 = nndescent_graph(X, 12, random_state=7, n_jobs=1, **kw)
    d2, i2 = nndescent_graph(X, 12, random_state=7, n_jobs=2, **kw)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_array_equal(d1, d2)
    # and the seed matters (the check above is not trivially about a fixed output)
    _, i3 = nndescent_graph(X, 12, random_state=8, n_jobs=2, **kw)
    assert not np.array_equal(i1, i3)


@pytest.mark.jit_only  # m=3,000 and a widened build: slow when interpreted
def test_same_graph_for_one_and_two_threads_when_the_build_widens(capsys):
    X = uniform_cube(3000, 30, seed=3).astype(np.float32)
    kw = {"n_trees": 1, "leaf_size": 20, "random_state": 5, "verbose": 2}
    d1, i1 = nndescent_graph(X, 10, n_jobs=1, **kw)
    assert "continued 3000 x" in capsys.readouterr().out  # the widening path ran
    d2, i2 = nndescent_graph(X, 10, n_jobs=2, **kw)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_array_equal(d1, d2)


@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_leaf_gram_keys_survive_an_offset_from_the_origin(offset):
    # float32 keys |a|^2 + |b|^2 - 2 a.b of uncentred rows 1e4 from the origin would carry
    # errors of about 1e-7 * 20 * 1e8 = 200 against neighbour keys of about 10: the leaf
    # GEMM centres each leaf first. Leaves only (no rounds), so the test sees their keys.
    X = (blobs(2000, 20, seed=4) + offset).astype(np.float32)
    exact = brute(X.astype(np.float64), X.astype(np.float64), 8, "euclidean", True)[1]
    _, ind = nndescent_graph(X, 8, n_trees=4, leaf_size=400, n_iters=0, build_neighbors=8,
                             random_state=0)
    assert recall(ind, exact) >= 0.95  # 0.997 at both offsets; 1e4 uncentred fails


@pytest.mark.jit_only  # m >= 1,500: minutes when interpreted (coverage pass)
def test_same_graph_for_one_and_two_threads_over_many_join_blocks():
    # max_candidates=60 makes each local-join block 128 points: 12 blocks per round here
    X = blobs(1500, 10, seed=2)
    kw = {"max_candidates": 60, "n_trees": 2, "leaf_size": 20, "random_state": 3}
    d1, i1 = nndescent_graph(X, 6, n_jobs=1, **kw)
    d2, i2 = nndescent_graph(X, 6, n_jobs=2, **kw)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_array_equal(d1, d2)


@pytest.mark.jit_only  # m >= 1,500: minutes when interpreted (coverage pass)
@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine", "manhattan"])
def test_every_metric_exact_distances_and_recall(metric):
    X = clustered(1500, 20, intrinsic=5, seed=2)
    k = 8
    dist, ind = nndescent_graph(X, k, metric=metric, random_state=0)
    ref_d, ref_i = brute(X, X, k, metric, self_query=True)
    assert recall(ind, ref_i) >= 0.98
    # the returned distances are the exact distances of the returned indices
    full = cdist(X, X, metric="cityblock" if metric == "manhattan" else metric)
    np.testing.assert_allclose(dist, np.take_along_axis(full, ind, 1), rtol=1e-10, atol=1e-12)
    assert np.all(np.diff(dist, axis=1) >= 0)
    assert not np.any(ind == np.arange(X.shape[0])[:, None])
    assert all(np.unique(row).size == k for row in ind)


@pytest.mark.jit_only  # m >= 1,500: minutes when interpreted (coverage pass)
def test_float32_in_float32_out_with_exact_distances():
    X = clustered(2000, 30, seed=3, dtype=np.float32)
    dist, ind = nndescent_graph(X, 10, random_state=0)
    assert dist.dtype == np.float32 and ind.dtype == np.int64
    exact = NearestNeighbors(n_neighbors=10, algorithm="brute").fit(X).kneighbors()[1]
    assert recall(ind, exact) >= 0.98
    X64 = X.astype(np.float64)
    true = np.sqrt(((X64[:, None, :] - X64[ind]) ** 2).sum(-1))
    np.testing.assert_allclose(dist, true.astype(np.float32), rtol=1e-6)


@pytest.mark.jit_only  # m >= 1,500: minutes when interpreted (coverage pass)
@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
def test_query_recall_for_new_points(metric):
    both = clustered(3400, 20, intrinsic=6, seed=4)
    X, Q = both[:3000], both[3000:]  # queries: same clusters, unseen points
    index = nndescent_index(X, 10, metric=metric, random_state=0)
    ref_d, ref_i = brute(X, Q, 10, metric, self_query=False)
    dist, ind = nndescent_query(index, Q, 10)
    assert recall(ind, ref_i) >= 0.97
    full = cdist(Q, X, metric="cityblock" if metric == "manhattan" else metric)
    np.testing.assert_allclose(dist, np.take_along_axis(full, ind, 1), rtol=1e-10)
    # a wider search does at least as well, and repeated queries agree
    _, wide = nndescent_query(index, Q, 10, epsilon=0.5)
    assert recall(wide, ref_i) >= recall(ind, ref_i)
    np.testing.assert_array_equal(nndescent_query(index, Q, 10, n_jobs=1)[1], ind)


def test_query_more_neighbours_than_graph_and_return_index():
    X = uniform_subspace(800, 12, intrinsic=4, seed=5)
    dist, ind, index = nndescent_graph(X, 5, random_state=0, return_index=True)
    assert isinstance(index, NNDescentIndex)
    np.testing.assert_array_equal(index.neighbor_indices_, ind)
    Q = X[:50] + 1e-3
    _, ref = brute(X, Q, 20, "euclidean", self_query=False)
    assert recall(nndescent_query(index, Q, 20, epsilon=0.3)[1], ref) >= 0.95


def test_tiny_inputs_and_duplicates_are_exact():
    X = np.array([[0.0], [1.0], [3.0], [7.0], [15.0]])
    dist, ind = nndescent_graph(X, 4, random_state=0)
    ref_d, ref_i = brute(X, X, 4, "euclidean", self_query=True)
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_allclose(dist, ref_d)
    # many duplicate rows: no hang, zero distances, never the point itself
    D = np.repeat(np.random.default_rng(0).normal(size=(10, 3)), 100, axis=0)
    dist, ind = nndescent_graph(D, 5, random_state=0)
    assert np.all(dist == 0.0)
    assert not np.any(ind == np.arange(D.shape[0])[:, None])


@pytest.mark.parametrize("verbose", [1, 2])
def test_verbose_prints_one_line_per_round_without_tqdm(capsys, monkeypatch, verbose):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now fails
    X = blobs(1000, 10, seed=6)
    index = nndescent_index(X, 5, n_iters=3, delta=0.0, n_trees=1, leaf_size=20,
                            build_neighbors=5, random_state=0, verbose=verbose)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "round" in ln]
    assert len(lines) == index.n_iters_ == 3
    assert lines[0].startswith("NN-descent round 1/3:") and lines[0].endswith("updates")


class _RecordingBar:
    made = []

    def __init__(self, total, desc, unit, file):
        self.total, self.desc, self.unit = total, desc, unit
        self.postfixes, self.updates, self.closed = [], 0, False
        _RecordingBar.made.append(self)

    def set_postfix_str(self, text, refresh=True):
        self.postfixes.append(text)

    def update(self, n):
        self.updates += n

    def close(self):
        self.closed = True


def test_verbose_1_draws_a_tqdm_bar_over_rounds_with_update_counts(capsys, monkeypatch):
    fake = types.ModuleType("tqdm")
    fake.tqdm = _RecordingBar
    monkeypatch.setitem(sys.modules, "tqdm", fake)
    _RecordingBar.made.clear()
    X = blobs(1000, 10, seed=6)
    index = nndescent_index(X, 5, n_iters=4, delta=0.0, n_trees=1, leaf_size=20,
                            build_neighbors=5, random_state=0, verbose=1)
    (bar,) = _RecordingBar.made
    assert (bar.total, bar.desc, bar.unit) == (4, "NN-descent", "round")
    assert bar.updates == index.n_iters_ == len(bar.postfixes) and bar.closed
    counts = [int(text.split()[0]) for text in bar.postfixes]
    assert all(text.endswith(" updates") for text in bar.postfixes) and counts[0] > 0
    assert "round" not in capsys.readouterr().out  # the bar replaces the lines


def test_defaults_documented():
    p = default_parameters(100000, 15)
    assert p == {"n_trees": 8, "n_iters": 17, "max_candidates": 15, "leaf_size": 1024}
    assert default_parameters(100000, 15, "cosine") == p
    assert default_parameters(100000, 15, "manhattan") == {
        "n_trees": 10, "n_iters": 17, "max_candidates": 15, "leaf_size": 75}
    assert default_parameters(20000, 5)["max_candidates"] == 15
    assert default_parameters(20000, 200)["leaf_size"] == 1200
    assert default_parameters(20000, 500)["leaf_size"] == 2048
    assert default_parameters(10**6, 15)["n_trees"] == 14
    assert default_parameters(50, 15)["n_trees"] == 3


@pytest.mark.parametrize("k", [3, 10, 40])
def test_one_leaf_holding_every_point_gives_the_exact_graph(k):
    # leaves only: each row's best keys are selected from its leaf by the block-minimum
    # bound (k <= 31 blocks of 16) or by the local heap (k=40 > 31 blocks)
    X = np.random.default_rng(3).normal(size=(500, 8))
    d, ind = nndescent_graph(X, k, n_trees=1, leaf_size=1024, n_iters=0, build_neighbors=k,
                             random_state=0)
    ref_d, ref_i = brute(X, X, k, "euclidean", True)
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_allclose(d, ref_d, rtol=1e-12)


def test_one_leaf_of_many_duplicates_gives_exact_distances():
    # 50 points, 10 copies each: ties everywhere, so more than 4 k keys sit under the bound
    # and the local heap ranks them; the distances are exact whichever tied copy is kept
    X = np.repeat(np.random.default_rng(4).normal(size=(50, 6)), 10, axis=0)
    d, _ = nndescent_graph(X, 12, n_trees=1, leaf_size=1024, n_iters=0, build_neighbors=12,
                           random_state=0)
    np.testing.assert_allclose(d, brute(X, X, 12, "euclidean", True)[0], atol=1e-12)


@pytest.mark.jit_only  # interpreted (coverage pass) it takes most of a minute or more
def test_leaf_gram_matrices_are_announced_to_the_memory_budget(monkeypatch):
    from fastdr.exceptions import MemoryBudgetError

    X = blobs(3000, 5, seed=1)
    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "8M")
    # 3000 x 3000 float64 per thread is 72 MB: refused before any tree is built
    with pytest.raises(MemoryBudgetError, match="leaf Gram matrices.*smaller leaf_size"):
        nndescent_graph(X, 5, leaf_size=5000, n_jobs=1)
    nndescent_graph(X, 5, leaf_size=500, n_jobs=1)  # 2 MB: fits


@pytest.mark.parametrize("X, leaf_size", [
    (clustered(3000, 20), 100),
    (np.repeat(clustered(40, 5), 9, axis=0), 12),  # duplicates: positional cuts
    (clustered(50, 3), 60),  # one leaf
])
def test_rp_tree_matches_the_node_by_node_reference(X, leaf_size):
    from fastdr._kernels.nndescent.rp_trees import build_tree, hash3

    from ..reference import rp_tree

    perm, lo, hi, left, right, a, b, _ = build_tree(X, np.uint64(7), leaf_size)
    nodes, order = rp_tree(X, 7, leaf_size, lambda s, node, j: int(hash3(s, node, j)))
    assert list(zip(lo, hi, left, right, a, b, strict=True)) == nodes
    assert perm.tolist() == order


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"n_neighbors": 0}, ValueError, "n_neighbors must be >= 1"),
    ({"n_neighbors": 30}, ValueError, "n_neighbors=30 must be smaller than the number of points"),
    ({"n_neighbors": 2.5}, TypeError, "n_neighbors must be an int"),
    ({"metric": "chebyshev"}, ValueError, "metric must be one of"),
    ({"n_trees": 0}, ValueError, "n_trees must be >= 1"),
    ({"n_iters": -1}, ValueError, "n_iters must be >= 0"),
    ({"max_candidates": 0}, ValueError, "max_candidates must be >= 1"),
    ({"delta": -0.1}, ValueError, "delta must be >= 0"),
    ({"leaf_size": 0}, ValueError, "leaf_size must be >= 1"),
    ({"build_neighbors": 4}, ValueError, "build_neighbors must be >= 5"),
    ({"build_neighbors": 30}, ValueError, "build_neighbors must be <= 29"),
    ({"random_state": "seed"}, TypeError, "random_state must be None, an int"),
    ({"n_jobs": 0}, ValueError, "n_jobs=0 is not a thread count"),
    ({"verbose": -1}, ValueError, "verbose must be >= 0"),
])
def test_bad_parameters(kwargs, exc, match):
    X = np.random.default_rng(0).normal(size=(30, 3))
    params = {"n_neighbors": 5, **kwargs}
    k = params.pop("n_neighbors")
    with pytest.raises(exc, match=match):
        nndescent_graph(X, k, **params)


def test_bad_input():
    X = np.random.default_rng(0).normal(size=(30, 3))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        nndescent_graph(bad, 5)
    with pytest.raises(ValueError, match="Expected a 2-D array"):
        nndescent_graph(X[:, 0], 5)
    with pytest.raises(ValueError, match="overflow float32 distance sums"):
        nndescent_graph((X * 1e19).astype(np.float32), 5)
    index = nndescent_index(X, 5, random_state=0)
    with pytest.raises(ValueError, match="Q has 2 features, but the index was built on 3"):
        nndescent_query(index, X[:, :2], 5)
    with pytest.raises(ValueError, match="n_neighbors must be <= 30"):
        nndescent_query(index, X, 31)
    with pytest.raises(ValueError, match="epsilon must be >= 0"):
        nndescent_query(index, X, 5, epsilon=-1.0)
    with pytest.raises(TypeError, match="index_state must be an NNDescentIndex"):
        nndescent_query((X, None), X, 5)


def test_leaf_initialisation_keeps_the_best_leaf_mates_over_every_tree():
    # tiny leaves first (rows left part-filled: the pushes path), then large ones (block
    # minimum bound on the still-empty or part-filled rows, the improving scan on full ones):
    # every row must hold the `width` nearest of all its leaf mates, by (key, index)
    from fastdr._kernels.nndescent.leaves import init_from_leaves_gram
    from fastdr._runtime.threads import parallel_section
    from fastdr.neighbors._nndescent_build import _build_forest

    X = np.random.default_rng(11).normal(size=(600, 6))
    m, width = X.shape[0], 4
    heap_d = np.full((m, width), np.inf)
    heap_i = np.full((m, width), np.iinfo(np.int64).max, dtype=np.int64)
    heap_f = np.zeros((m, width), dtype=np.uint8)
    mates = [set() for _ in range(m)]
    with parallel_section(None) as threads:
        for n_trees, leaf_size, seed in ((1, 3, 1), (2, 200, 2), (1, 600, 3)):
            forest = _build_forest(X, n_trees, leaf_size, np.arange(seed, seed + n_trees),
                                   threads)
            init_from_leaves_gram(X, forest["perm"], forest["tree_leaf_ptr"],
                                  forest["leaf_ids"], forest["lo"], forest["hi"], heap_d,
                                  heap_i, heap_f)
            for t in range(n_trees):
                for node in forest["leaf_ids"][forest["tree_leaf_ptr"][t]:
                                               forest["tree_leaf_ptr"][t + 1]]:
                    members = forest["perm"][t, forest["lo"][node]:forest["hi"][node]]
                    for p in members:
                        mates[p].update(int(q) for q in members if q != p)
            for p in range(m):
                cand = np.array(sorted(mates[p]), dtype=np.int64)
                keys = ((X[cand] - X[p]) ** 2).sum(axis=1)
                order = np.lexsort((cand, keys))[:width]
                expected = set(cand[order].tolist())
                filled = heap_i[p] != np.iinfo(np.int64).max
                assert set(heap_i[p][filled].tolist()) == expected, (leaf_size, p)
                np.testing.assert_allclose(np.sort(heap_d[p][filled]), np.sort(keys[order]),
                                           rtol=1e-9, atol=1e-12)
