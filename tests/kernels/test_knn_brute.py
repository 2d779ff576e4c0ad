"""Brute-force k-NN kernels (fastdr/_kernels/knn/brute.py: the screened per-row heap
selection, direct sums and radius search) called directly, as fastdr/neighbors/_search.py
and fastdr/_kernels/distances/minkowski.py call them, and compared with the naive references
of tests/reference.py."""

import numpy as np
import pytest

from fastdr._kernels.heap import INDEX_SENTINEL, heap_init, heap_sort
from fastdr._kernels.knn import brute

from .. import reference


def _select(blocks, k, skip, dtype, backwards):
    """Offer the key blocks (targets numbered on from block to block) to one heap, in order
    or last block first, each block stored in a longer buffer whose tail must be ignored;
    return the sorted heap. Offered backwards, a key equal to the heap's root can carry a
    smaller index and must enter."""
    heap_d = np.empty(k)
    heap_i = np.empty(k, dtype=np.int64)
    heap_init(heap_d, heap_i)
    starts = np.cumsum([0] + [keys.size for keys in blocks])
    order = range(len(blocks) - 1, -1, -1) if backwards else range(len(blocks))
    for b in order:
        keys = blocks[b]
        buffer = np.full(keys.size + 7, -1.0, dtype=dtype)  # smaller than every key
        buffer[:keys.size] = keys
        brute.select_row_candidates(buffer, keys.size, starts[b], skip, heap_d, heap_i)
    heap_sort(heap_d, heap_i)
    return heap_d, heap_i


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sizes", [(0,), (1,), (63,), (64,), (65,), (64, 64), (130, 7, 200),
                                   (3, 300)])
@pytest.mark.parametrize("k", [1, 5, 70])
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("backwards", [False, True])
def test_select_row_candidates_keeps_the_k_smallest_pairs(rng, dtype, sizes, k, ties,
                                                          backwards):
    blocks = [(rng.integers(0, 6, n) if ties else rng.random(n)).astype(dtype) for n in sizes]
    if ties and sizes[0]:
        blocks[0][-1] = 0  # ties the smallest keys of the later blocks, at a smaller index
    stream = list(enumerate(np.concatenate(blocks).tolist()))
    for skip in (-1, len(stream) // 2):
        heap_d, heap_i = _select(blocks, k, skip, dtype, backwards)
        want_d, want_i = reference.heap_select([(j, v) for j, v in stream if j != skip], k)
        np.testing.assert_array_equal(heap_i, want_i)
        np.testing.assert_array_equal(heap_d, want_d)
    if sum(sizes) < k:
        assert heap_i[-1] == INDEX_SENTINEL and heap_d[-1] == np.inf


def _points(rng, m, n, d, dtype, offset):
    """Targets with duplicate rows; the queries are target rows offset:offset + m for a
    self query (offset >= 0), else new rows, one of them a copy of a duplicated target."""
    T = rng.standard_normal((n, d))
    T[n // 2:n // 2 + 2] = T[0]
    if offset >= 0:
        Q = T[offset:offset + m]
    else:
        Q = rng.standard_normal((m, d))
        Q[-1] = T[0]
    return np.ascontiguousarray(Q, dtype=dtype), T.astype(dtype)


# (m, n, d, k, self_offset): one row; k = n; a self query; a block of a self query
KNN_CASES = [(1, 1, 1, 1, -1), (5, 9, 3, 9, -1), (40, 25, 4, 3, -1), (30, 30, 5, 5, 0),
             (2, 2, 2, 1, 0), (10, 30, 3, 4, 7)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m,n,d,k,offset", KNN_CASES)
def test_knn_direct_matches_a_full_sort(rng, dtype, m, n, d, k, offset):
    Q, T = _points(rng, m, n, d, dtype, offset)
    out_d = np.empty((m, k))
    out_i = np.empty((m, k), dtype=np.int64)
    brute.knn_direct(Q, T, k, offset, out_d, out_i)
    want_d, want_i = reference.smallest_per_row(reference.sq_euclidean(Q, T), k, offset)
    np.testing.assert_array_equal(out_i, want_i)
    np.testing.assert_allclose(out_d, want_d, rtol=1e-12, atol=1e-12)


def _gap_radius(D):
    """A radius halfway across the widest gap among the middle values: none lies within
    rounding of it."""
    values = np.unique(D)
    if values.size < 2:
        return float(values[0]) + 1.0
    mid = values[values.size // 4:3 * values.size // 4 + 2]
    gap = np.argmax(np.diff(mid))
    return float(0.5 * (mid[gap] + mid[gap + 1]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m,n,d,k,offset", KNN_CASES)
@pytest.mark.parametrize("on_zero", [False, True])
def test_radius_count_and_fill_match_a_scan(rng, dtype, m, n, d, k, offset, on_zero):
    Q, T = _points(rng, m, n, d, dtype, offset)
    D = reference.sq_euclidean(Q, T)
    # radius 0 finds exactly the copies (an inclusive bound)
    radius_sq = 0.0 if on_zero else _gap_radius(D)
    counts = brute.radius_count(Q, T, radius_sq, offset)
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    out_d = np.empty(indptr[-1])
    out_i = np.empty(indptr[-1], dtype=np.int64)
    brute.radius_fill(Q, T, radius_sq, offset, indptr, out_d, out_i)
    want = reference.within_per_row(D, radius_sq, offset)
    assert indptr[-1] == sum(len(cols) for cols, _ in want)
    for i, (cols, values) in enumerate(want):
        np.testing.assert_array_equal(out_i[indptr[i]:indptr[i + 1]], cols)
        np.testing.assert_allclose(out_d[indptr[i]:indptr[i + 1]], values, rtol=1e-12,
                                   atol=1e-12)
    if on_zero:
        assert indptr[-1] > 0
