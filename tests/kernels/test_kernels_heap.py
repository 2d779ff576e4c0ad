"""The bounded k-NN heap and the reservoir selection, against a full stable sort."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastdr._kernels.heap import heap_init, heap_push, heap_sort
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
