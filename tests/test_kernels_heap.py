import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fastdr._kernels.heap import heap_init, heap_push, heap_sort


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
