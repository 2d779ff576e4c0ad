"""The bounded k-NN heap and the reservoir selection, against a full stable sort."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from fastdr._kernels.heap import (
    INDEX_SENTINEL,
    frontier_pop_root,
    frontier_push,
    heap_init,
    heap_push,
    heap_push_row,
    heap_sort,
)
from fastdr._kernels.reservoir import keep_smallest, reservoir_finish

from .. import reference


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=20), min_size=1, max_size=60),
    st.integers(min_value=1, max_value=10),
)
def test_heap_keeps_k_smallest_by_distance_then_index(values, k):
    values = np.asarray(values, dtype=np.float64)
    k = min(k, len(values))
    dist = np.empty(k)
    idx = np.empty(k, dtype=np.int64)
    heap_init(dist, idx)
    for i in np.random.default_rng(len(values)).permutation(len(values)):
        heap_push(dist, idx, values[i], i)
    heap_sort(dist, idx)
    expected = np.lexsort((np.arange(len(values)), values))[:k]
    np.testing.assert_array_equal(idx, expected)
    np.testing.assert_array_equal(dist, values[expected])


def test_heap_push_rejects_worse_and_tie_with_larger_index():
    dist = np.empty(2)
    idx = np.empty(2, dtype=np.int64)
    heap_init(dist, idx)
    assert heap_push(dist, idx, 1.0, 5)
    assert heap_push(dist, idx, 2.0, 3)
    assert not heap_push(dist, idx, 2.0, 4)  # same distance, larger index: rejected
    assert heap_push(dist, idx, 2.0, 1)  # same distance, smaller index: accepted
    heap_sort(dist, idx)
    assert idx.tolist() == [5, 1]


@njit(cache=True)
def _push_rows(dist, idx, flag, rows, values, ids):
    entered = 0
    for t in range(rows.shape[0]):
        entered += heap_push_row(dist, idx, rows[t], values[t], ids[t], flag=flag, unique=True)
    return entered


@pytest.mark.parametrize("seed", range(3))
def test_row_push_keeps_the_best_distinct_ids_with_their_flags(seed):
    # the row-indexed push with NN-descent's flags and duplicate test, against a list that
    # drops its worst (distance, index) entry for each candidate that beats it and is new
    rng = np.random.default_rng(seed)
    m, k, n = 3, 4, 80
    rows = rng.integers(0, m, n)
    values = rng.integers(0, 6, n).astype(np.float64)  # many ties
    ids = rng.integers(0, 15, n)  # repeated ids
    dist = np.full((m, k), np.inf)
    idx = np.full((m, k), INDEX_SENTINEL, dtype=np.int64)
    flag = np.zeros((m, k), dtype=np.uint8)
    entered = _push_rows(dist, idx, flag, rows, values, ids)
    lists = [[(np.inf, INDEX_SENTINEL)] * k for _ in range(m)]
    expected_entered = 0
    for r, v, j in zip(rows, values, ids, strict=True):
        worst = max(lists[r])
        if (v, j) < worst and all(j != e[1] for e in lists[r]):
            lists[r].remove(worst)
            lists[r].append((v, j))
            expected_entered += 1
    assert entered == expected_entered
    assert ((flag == 1) == (idx != INDEX_SENTINEL)).all()
    for r in range(m):
        heap_sort(dist[r], idx[r])
        assert list(zip(dist[r], idx[r], strict=True)) == sorted(lists[r])


@njit(cache=True)
def _frontier_order(values):
    fd = np.empty(values.shape[0])
    fi = np.empty(values.shape[0], dtype=np.int64)
    for t in range(values.shape[0]):
        frontier_push(fd, fi, t, values[t], t)
    out = np.empty(values.shape[0])
    for size in range(values.shape[0], 0, -1):
        out[values.shape[0] - size] = fd[0]
        frontier_pop_root(fd, fi, size)
    return out


def test_frontier_pops_in_ascending_key_order():
    values = np.random.default_rng(0).integers(0, 10, 50).astype(np.float64)
    np.testing.assert_array_equal(_frontier_order(values), np.sort(values))


@pytest.mark.parametrize("seed", range(5))
def test_reservoir_keeps_the_smallest_by_key_then_index(seed):
    # the screen's reservoir (appends inline, compactions by keep_smallest) over one row of
    # 500 keys: 7 full chunks of 64 and a ragged tail of 52, many ties, a small reservoir
    from fastdr._kernels.knn.screen import _screen_tile

    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 20, 500).astype(np.float64)  # many ties
    n = 7
    buf_d = np.empty((1, n + 5))
    buf_i = np.empty((1, n + 5), dtype=np.int64)
    counts = np.zeros(1, dtype=np.int64)
    thresholds = np.full(1, np.inf)
    for t0 in (0, 250):  # two target blocks, as the kernel offers them
        _screen_tile(np.ascontiguousarray(keys[None, t0:t0 + 250]), 250, t0,
                     np.full(1, -1, dtype=np.int64), buf_d, buf_i, counts, thresholds, n)
    kept, largest = reservoir_finish(buf_d[0], buf_i[0], counts[0], n)
    order = np.lexsort((np.arange(keys.size), keys))[:n]
    assert kept == n and largest == keys[order].max()
    got = sorted(zip(buf_d[0, :kept], buf_i[0, :kept], strict=True))
    assert got == sorted(zip(keys[order], order, strict=True))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("count,n", [(1, 1), (2, 1), (5, 5), (9, 4), (31, 7), (200, 16),
                                     (200, 1)])
@pytest.mark.parametrize("ties", [False, True])
def test_keep_smallest_and_finish_match_a_full_sort(dtype, count, n, ties):
    rng = np.random.default_rng(count * 31 + n)
    keys = (rng.integers(0, 4, count) if ties else rng.standard_normal(count)).astype(dtype)
    order = rng.permutation(count)  # indices arrive in any order
    buf_d = keys[order].copy()
    buf_i = order.astype(np.int64)
    want = reference.smallest_pairs(keys, n)
    largest = keep_smallest(buf_d, buf_i, count, n)
    assert sorted(zip(buf_d[:n].tolist(), buf_i[:n].tolist(), strict=True)) == want
    assert largest == want[-1][0]
    # finishing: a full buffer compacts, a short one is kept as it is
    buf_d = keys[order].copy()
    buf_i = order.astype(np.int64)
    kept, largest = reservoir_finish(buf_d, buf_i, count, n)
    assert kept == min(count, n) and largest == want[-1][0]
    assert sorted(zip(buf_d[:kept].tolist(), buf_i[:kept].tolist(), strict=True)) == want


def test_reservoir_finish_of_an_empty_row():
    kept, largest = reservoir_finish(np.empty(4), np.empty(4, dtype=np.int64), 0, 3)
    assert kept == 0 and largest == np.inf


def test_trailing_zeros():
    from fastdr._kernels.knn.brute import trailing_zeros

    for bit in (0, 1, 7, 31, 62, 63):
        value = np.uint64(1) << np.uint64(bit)
        assert int(trailing_zeros(value | (value << np.uint64(1)))) == bit
