"""NN-descent kernels (fastdr/_kernels/nndescent/rounds.py and search.py) called directly,
as fastdr/neighbors/_nndescent.py and _nndescent_build.py call them, and compared with the
naive references of tests/reference.py: distances, row sorts, reverse edges, candidate
sampling, local joins, heap updates, recall counts, and the graph search, which on a
complete graph (or none) finds the exact neighbours."""

import numpy as np
import pytest

from fastdr._kernels import codes
from fastdr._kernels.heap import INDEX_SENTINEL
from fastdr._kernels.nndescent import rounds
from fastdr._kernels.nndescent import search as search_kernels
from fastdr._kernels.nndescent.rp_trees import hash3
from fastdr.neighbors._nndescent_build import _build_forest

from .. import reference

KEY_METRICS = {"sqeuclidean": codes.SQEUCLIDEAN, "manhattan": codes.MANHATTAN}
EXACT_METRICS = {**KEY_METRICS, "cosine": codes.COSINE}
EMPTY = int(rounds.CAND_EMPTY)


def _grid_points(rng, m, d, dtype, low=-3, high=4):
    """Small integers: every key is an exact integer in float32 too, with many exact ties."""
    return rng.integers(low, high, (m, d)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("d", [1, 7, 33])
def test_key_and_exact_distances_match_the_reference(rng, dtype, d):
    X = rng.standard_normal((6, d)).astype(dtype)
    X[5] = 0.0  # cosine with an all-zero row is 1
    norms = np.sqrt((X.astype(np.float64) ** 2).sum(axis=1))
    key_rtol = 1e-12 if dtype == np.float64 else 1e-5
    for a in range(6):
        for b in range(6):
            for name, code in EXACT_METRICS.items():
                want = reference.exact_pair_distance(X[a], X[b], name)
                got = rounds.exact_distance(X[a], X[b], code, norms[a], norms[b])
                np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
            for name, code in KEY_METRICS.items():
                want = reference.exact_pair_distance(X[a], X[b], name)
                np.testing.assert_allclose(rounds.key_distance(X[a], X[b], code), want,
                                           rtol=key_rtol, atol=key_rtol)
                np.testing.assert_allclose(rounds.key_to_row(X[a], X, b, code), want,
                                           rtol=key_rtol, atol=key_rtol)
            np.testing.assert_allclose(rounds.sq_distance(X[a], X[b]),
                                       reference.exact_pair_distance(X[a], X[b], "sqeuclidean"),
                                       rtol=key_rtol, atol=key_rtol)
            np.testing.assert_allclose(rounds.l1_distance(X[a], X[b]),
                                       reference.exact_pair_distance(X[a], X[b], "manhattan"),
                                       rtol=key_rtol, atol=key_rtol)
    assert rounds.exact_distance(X[0], X[5], codes.COSINE, norms[0], norms[5]) == 1.0


@pytest.mark.parametrize("k", [1, 2, 9, 40])
def test_sort_row_orders_by_distance_then_index(rng, k):
    for _ in range(5):
        dist = rng.integers(0, 4, k).astype(np.float64)
        idx = rng.permutation(100)[:k].astype(np.int64)
        dist[rng.random(k) < 0.2] = np.inf
        idx[dist == np.inf] = INDEX_SENTINEL
        want_d, want_i = reference.sort_pairs(dist, idx)
        rounds.sort_row(dist, idx)
        np.testing.assert_array_equal(dist, want_d)
        np.testing.assert_array_equal(idx, want_i)


def _random_heaps(rng, m, k, *, dtype=np.float64, fill=0.8):
    """k-NN heap rows (max-heaps, rows sorted by descending (distance, index)) of distinct
    indices other than the row's own, about ``fill`` of the slots used, the rest empty
    (inf, sentinel, flag 0); distances small integers (ties), flags random."""
    heap_d = np.full((m, k), np.inf, dtype=dtype)
    heap_i = np.full((m, k), INDEX_SENTINEL, dtype=np.int64)
    heap_f = np.zeros((m, k), dtype=np.uint8)
    for i in range(m):
        used = min(int(rng.binomial(k, fill)), m - 1)
        others = rng.permutation(np.delete(np.arange(m), i))[:used]
        d = rng.integers(1, 6, used).astype(dtype)
        order = np.lexsort((others, d))[::-1]
        heap_d[i, k - used:] = d[order]
        heap_i[i, k - used:] = others[order]
        heap_f[i, k - used:] = rng.integers(0, 2, used)
    return heap_d, heap_i, heap_f


def _reverse(heap_i, heap_f):
    m, k = heap_i.shape
    rev_ptr = np.zeros(m + 1, dtype=np.int64)
    rev_idx = np.empty(m * k, dtype=np.int32)
    rev_flag = np.empty(m * k, dtype=np.uint8)
    rounds.reverse_edges(heap_i, heap_f, rev_ptr, rev_idx, rev_flag)
    return rev_ptr, rev_idx, rev_flag


@pytest.mark.parametrize("m,k", [(1, 1), (2, 1), (30, 4), (200, 12)])
def test_reverse_edges_list_every_edge_into_a_point(rng, m, k):
    _, heap_i, heap_f = _random_heaps(rng, m, k)
    rev_ptr, rev_idx, rev_flag = _reverse(heap_i, heap_f)
    want = reference.reverse_graph(heap_i, heap_f, INDEX_SENTINEL)
    assert rev_ptr[0] == 0
    for j, entries in enumerate(want):
        got = list(zip(rev_idx[rev_ptr[j]:rev_ptr[j + 1]].tolist(),
                       rev_flag[rev_ptr[j]:rev_ptr[j + 1]].tolist(), strict=True))
        assert got == [(i, int(f)) for i, f in entries]


def _sample(heap_i, heap_f, c, seed):
    m = heap_i.shape[0]
    new_i = np.empty((m, c), dtype=np.int32)
    old_i = np.empty((m, c), dtype=np.int32)
    rounds.sample_candidates(heap_i, heap_f, *_reverse(heap_i, heap_f), seed, new_i, old_i)
    return new_i, old_i


def _as_sets(cand):
    return [sorted(j for j in row.tolist() if j != EMPTY) for row in cand]


@pytest.mark.parametrize("m,k,c", [(1, 1, 1), (2, 1, 1), (40, 5, 3), (40, 5, 60),
                                   (300, 10, 8), (300, 10, 15)])
def test_sample_candidates_keep_the_smallest_priorities(rng, m, k, c):
    _, heap_i, heap_f = _random_heaps(rng, m, k)
    heap_f[: m // 10] = 0  # points without a new edge of their own
    seed = np.uint64(hash3(np.uint64(12345), 3, 0))
    new_i, old_i = _sample(heap_i, heap_f, c, seed)
    want_new, want_old = reference.sampled_candidates(
        heap_i, heap_f, c, lambda a, b: int(hash3(seed, a, b)), INDEX_SENTINEL)
    assert _as_sets(new_i) == want_new
    assert _as_sets(old_i) == want_old
    # the lists hold each candidate once, then empty slots
    for row in np.vstack([new_i, old_i]):
        kept = row[row != EMPTY]
        assert np.unique(kept).size == kept.size


def test_retire_sampled_clears_the_flags_of_sampled_edges(rng):
    _, heap_i, heap_f = _random_heaps(rng, 120, 8)
    new_i, _ = _sample(heap_i, heap_f, 4, np.uint64(7))
    want = heap_f.copy()
    for i in range(heap_i.shape[0]):
        for t in range(heap_i.shape[1]):
            if heap_i[i, t] in new_i[i]:
                want[i, t] = 0
    rounds.retire_sampled(heap_i, heap_f, new_i)
    np.testing.assert_array_equal(heap_f, want)


def _candidate_lists(rng, m, n_points, c):
    """Random new and old lists of n_points rows: empty slots anywhere, a candidate
    sometimes in both lists, some points without a new candidate."""
    new_i = np.full((m, c), EMPTY, dtype=np.int32)
    old_i = np.full((m, c), EMPTY, dtype=np.int32)
    for i in range(n_points):
        for lists, n in ((new_i, rng.integers(0 if i % 5 == 0 else 1, c + 1)),
                         (old_i, rng.integers(0, c + 1))):
            slots = rng.permutation(c)[:n]
            lists[i, slots] = rng.permutation(m)[:n]
        if i % 7 == 3 and new_i[i].max() != EMPTY and c > 1:
            old_i[i, 0] = new_i[i][new_i[i] != EMPTY][0]
    new_i[::5] = EMPTY
    return new_i, old_i


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(KEY_METRICS))
@pytest.mark.parametrize("m,c,start,stop,chunk", [(1, 1, 0, 1, 1), (50, 4, 0, 50, 16),
                                                  (90, 6, 20, 83, 8)])
def test_local_join_proposes_exactly_the_pairs_within_bounds(rng, dtype, name, m, c, start,
                                                             stop, chunk):
    X = _grid_points(rng, m, 3, dtype)
    heap_d = np.zeros((m, 2), dtype=dtype)
    heap_d[:, 0] = rng.integers(0, 20, m) + 0.5  # no key lies on a bound
    new_i, old_i = _candidate_lists(rng, m, m, c)
    n_chunks = -(-(stop - start) // chunk)
    cap = (c * (c - 1) + 2 * c * c) * chunk
    buf_t = np.full(n_chunks * cap, -1, dtype=np.int32)
    buf_s = np.full(n_chunks * cap, -1, dtype=np.int32)
    buf_d = np.full(n_chunks * cap, -1, dtype=dtype)
    buf_n = np.zeros(n_chunks, dtype=np.int64)
    rounds.local_join(X, KEY_METRICS[name], heap_d, new_i, old_i, start, stop, chunk, cap,
                      buf_t, buf_s, buf_d, buf_n)
    bounds = heap_d[:, 0].astype(np.float64)
    for ch in range(n_chunks):
        want = []
        for i in range(start + ch * chunk, min(start + (ch + 1) * chunk, stop)):
            new = [int(j) for j in new_i[i] if j != EMPTY]
            old = [int(j) for j in old_i[i] if j != EMPTY]
            want += reference.join_proposals(X, name, bounds, new, old)
        part = slice(ch * cap, ch * cap + buf_n[ch])
        got = list(zip(buf_t[part].tolist(), buf_s[part].tolist(), buf_d[part].tolist(),
                       strict=True))
        assert got == want


def _sorted_rows(heap_d, heap_i, heap_f):
    return [sorted(zip(heap_d[r].tolist(), heap_i[r].tolist(), heap_f[r].tolist(),
                       strict=True)) for r in range(heap_d.shape[0])]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m,k,n_chunks,per_chunk", [(1, 1, 1, 3), (20, 3, 2, 30),
                                                    (150, 8, 5, 400)])
def test_apply_updates_push_the_proposals_in_chunk_order(rng, dtype, m, k, n_chunks,
                                                         per_chunk):
    heap_d, heap_i, heap_f = _random_heaps(rng, m, k, dtype=dtype, fill=0.7)
    cap = per_chunk + 5
    buf_t = np.full(n_chunks * cap, -1, dtype=np.int32)
    buf_s = np.full(n_chunks * cap, -1, dtype=np.int32)
    buf_d = np.full(n_chunks * cap, -1, dtype=dtype)  # beyond buf_n: never read
    buf_n = rng.integers(0, per_chunk + 1, n_chunks).astype(np.int64)
    proposals = []
    for ch in range(n_chunks):
        for e in range(ch * cap, ch * cap + buf_n[ch]):
            buf_t[e] = rng.integers(0, m)
            buf_s[e] = rng.integers(0, m)
            buf_d[e] = rng.integers(0, 7)  # ties with the heaps' distances
            proposals.append((int(buf_t[e]), int(buf_s[e]), float(buf_d[e])))
    want_rows, want_entered = reference.push_proposals(heap_d, heap_i, heap_f, proposals)
    results = []
    for n_parts in (1, 3, m + 2):
        d, i, f = heap_d.copy(), heap_i.copy(), heap_f.copy()
        counts = np.zeros(n_parts, dtype=np.int64)
        rounds.apply_updates(d, i, f, n_chunks, cap, buf_t, buf_s, buf_d, buf_n, n_parts,
                             counts)
        assert _sorted_rows(d, i, f) == [sorted(row) for row in want_rows]
        assert counts.sum() == want_entered
        results.append((d, i, f))
    for d, i, f in results[1:]:  # the same heaps, slot for slot, whatever the parts
        for got, ref in zip((d, i, f), results[0], strict=True):
            np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("name", list(KEY_METRICS))
@pytest.mark.parametrize("m,k", [(2, 1), (40, 3), (120, 10)])
def test_sample_hits_count_the_exact_neighbours_found(rng, name, m, k):
    X = _grid_points(rng, m, 3, np.float32)
    _, true_i = reference.smallest_per_row(reference.metric_keys(X, X, name), k, 0)
    heap_i = true_i.copy()
    lose = rng.random((m, k)) < 0.4  # replace some neighbours by sentinels or far points
    heap_i[lose] = np.where(rng.random(lose.sum()) < 0.5, INDEX_SENTINEL,
                            true_i[::-1][lose])
    rows = rng.permutation(m)[:max(1, m // 2)].astype(np.int64)
    hits = rounds.sample_hits(X, KEY_METRICS[name], rows, heap_i, k)
    want = [len(set(true_i[r].tolist()) & set(heap_i[r].tolist())) for r in rows]
    np.testing.assert_array_equal(hits, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(EXACT_METRICS))
def test_exact_sort_and_renumber_sort(rng, dtype, name):
    m, n, k = 25, 40, 6
    Q = rng.standard_normal((m, 5)).astype(dtype)
    T = rng.standard_normal((n, 5)).astype(dtype)
    T[7] = T[3]  # two candidates at the same distance: ties by index
    Q[2] = 0.0
    q_norms = np.sqrt((Q.astype(np.float64) ** 2).sum(axis=1))
    t_norms = np.sqrt((T.astype(np.float64) ** 2).sum(axis=1))
    key_i = np.array([rng.permutation(n)[:k] for _ in range(m)], dtype=np.int64)
    key_i[0, :2] = [7, 3]
    key_i[1, -2:] = INDEX_SENTINEL  # empty slots sort last at inf
    out_d = np.empty((m, k))
    out_i = np.empty((m, k), dtype=np.int64)
    rounds.exact_sort(Q, q_norms, T, t_norms, EXACT_METRICS[name], key_i, out_d, out_i)
    for r in range(m):
        dist = np.array([np.inf if j == INDEX_SENTINEL
                         else reference.exact_pair_distance(Q[r], T[j], name)
                         for j in key_i[r]])
        want_d, want_i = reference.sort_pairs(dist, key_i[r])
        np.testing.assert_array_equal(out_i[r], want_i)
        np.testing.assert_allclose(out_d[r], want_d, rtol=1e-12, atol=1e-12)
    # back to the original numbering: rows move, ids are mapped, rows are re-sorted
    order = rng.permutation(n).astype(np.int64)
    in_d = np.ascontiguousarray(np.round(rng.random((n, k)) * 4))  # ties
    in_i = np.array([rng.permutation(n)[:k] for _ in range(n)], dtype=np.int64)
    got_d = np.empty((n, k))
    got_i = np.empty((n, k), dtype=np.int64)
    rounds.renumber_sort(order, in_d, in_i, got_d, got_i)
    want_d, want_i = reference.renumbered_rows(order, in_d, in_i)
    np.testing.assert_array_equal(got_i, want_i)
    np.testing.assert_array_equal(got_d, want_d)


def _search(X, Q, code, k, graph, *, epsilon=0.1, n_trees=2, leaf_size=8, chunk=4):
    """search() as nndescent_query calls it, each row then sorted by (key, index)."""
    forest = _build_forest(X, n_trees, leaf_size, np.arange(n_trees) + 11, 1)
    ptr, cols = graph
    scale = (1.0 + epsilon) if code == codes.MANHATTAN else (1.0 + epsilon) ** 2
    out_d = np.empty((Q.shape[0], k), dtype=X.dtype)
    out_i = np.empty((Q.shape[0], k), dtype=np.int64)
    f = forest
    search_kernels.search(X, code, Q, scale, f["perm"], f["roots"], f["lo"], f["hi"],
                          f["left"], f["right"], f["a"], f["b"], f["off"], ptr, cols, chunk,
                          out_d, out_i)
    for r in range(Q.shape[0]):
        out_d[r], out_i[r] = reference.sort_pairs(out_d[r], out_i[r])
    return out_d, out_i


def _complete_graph(m):
    cols = np.array([j for i in range(m) for j in range(m) if j != i], dtype=np.int64)
    return np.arange(m + 1, dtype=np.int64) * (m - 1), cols


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(KEY_METRICS))
@pytest.mark.parametrize("m,n_q,k,chunk", [(1, 3, 1, 1), (30, 17, 5, 4), (400, 40, 12, 16)])
def test_search_on_a_complete_graph_finds_the_exact_neighbours(rng, dtype, name, m, n_q, k,
                                                               chunk):
    X = _grid_points(rng, m, 4, dtype)
    Q = _grid_points(rng, n_q, 4, dtype, -4, 5)
    Q[0] = X[0]  # a query on an indexed point
    got_d, got_i = _search(X, Q, KEY_METRICS[name], k, _complete_graph(m), chunk=chunk)
    want_d, want_i = reference.smallest_per_row(reference.metric_keys(Q, X, name), k)
    np.testing.assert_array_equal(got_i, want_i)
    np.testing.assert_array_equal(got_d, want_d)


@pytest.mark.parametrize("name", list(KEY_METRICS))
def test_search_without_edges_sweeps_to_the_exact_neighbours(rng, name):
    """No graph edge: the leaves reach fewer than k points, and the sweep measures the rest."""
    m, k = 60, 20  # more than the 2 trees' leaves (at most 8 points each) can hold
    X = rng.standard_normal((m, 3))
    Q = rng.standard_normal((9, 3))
    empty = (np.zeros(m + 1, dtype=np.int64), np.empty(0, dtype=np.int64))
    got_d, got_i = _search(X, Q, KEY_METRICS[name], k, empty)
    want_d, want_i = reference.smallest_per_row(reference.metric_keys(Q, X, name), k)
    np.testing.assert_array_equal(got_i, want_i)
    np.testing.assert_allclose(got_d, want_d, rtol=1e-12)
