"""CSR assembly of ``M = sum_i P_i^T B_i P_i`` (fastdr/_kernels/lle/assembly.py) called
directly, as fastdr/manifold/_lle_methods.block_matrix calls it, and compared with the naive
block sum of tests/reference.py."""

import numpy as np
import pytest

from fastdr._kernels.lle import assembly

from .. import reference


def _sets_and_blocks(rng, n, s, m, *, own_point):
    """n index sets of s distinct indices in [0, m) (the first one point i itself, as the
    modified method builds them) and exactly symmetric s x s blocks."""
    sets = np.empty((n, s), dtype=np.int64)
    for i in range(n):
        if own_point:
            sets[i, 0] = i
            others = rng.permutation(np.delete(np.arange(m), i))[:s - 1]
            sets[i, 1:] = others
        else:
            sets[i] = rng.permutation(m)[:s]
    B = rng.standard_normal((n, s, s))
    return sets, B + B.transpose(0, 2, 1)


def _assemble(blocks, sets, m, n_blocks, index_dtype):
    """The two passes and the cumulative sum, as block_matrix runs them; returns
    (indptr, indices, data) and the reverse lists."""
    ptr, point, slot = assembly.set_reverse_lists(sets, m)
    counts = assembly.set_row_counts(sets, ptr, point, n_blocks)
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.empty(indptr[-1], dtype=index_dtype)
    data = np.empty(indptr[-1])
    assembly.block_fill(blocks, sets, ptr, point, slot, n_blocks, indptr, indices, data)
    return (indptr, indices, data), (ptr, point, slot)


# (n points, set size s, m rows of M, own point first); m > n leaves rows no set holds
CASES = [(1, 1, 1, False), (1, 3, 5, False), (5, 3, 5, True), (40, 6, 40, True),
         (30, 4, 50, False), (60, 8, 25, False)]


@pytest.mark.parametrize("n,s,m,own_point", CASES)
def test_reverse_lists_list_each_rows_points_in_order(rng, n, s, m, own_point):
    sets, _ = _sets_and_blocks(rng, n, s, m, own_point=own_point)
    ptr, point, slot = assembly.set_reverse_lists(sets, m)
    want = reference.reverse_lists(sets, m)
    np.testing.assert_array_equal(np.diff(ptr), [len(entries) for entries in want])
    assert ptr[0] == 0
    for r, entries in enumerate(want):
        got = list(zip(point[ptr[r]:ptr[r + 1]].tolist(), slot[ptr[r]:ptr[r + 1]].tolist(),
                       strict=True))
        assert got == entries


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("n,s,m,own_point", CASES)
def test_block_fill_equals_the_block_sum_bit_for_bit(rng, n, s, m, own_point, index_dtype):
    sets, blocks = _sets_and_blocks(rng, n, s, m, own_point=own_point)
    want, touched = reference.block_sum(blocks, sets, m)
    first = None
    for n_blocks in (1, 3, m, m + 5):
        (indptr, indices, data), _ = _assemble(blocks, sets, m, n_blocks, index_dtype)
        for r in range(m):
            cols = indices[indptr[r]:indptr[r + 1]]
            # columns ascending: exactly those some set shares with row r
            np.testing.assert_array_equal(cols, np.flatnonzero(touched[r]))
            # the same additions in the same order (ascending point) as the reference
            np.testing.assert_array_equal(data[indptr[r]:indptr[r + 1]], want[r, cols])
        dense = np.zeros((m, m))
        dense[np.repeat(np.arange(m), np.diff(indptr)), indices] = data
        np.testing.assert_array_equal(dense, dense.T)  # bitwise symmetric
        if first is None:
            first = (indptr, indices, data)
        for got, ref in zip((indptr, indices, data), first, strict=True):
            np.testing.assert_array_equal(got, ref)  # whatever the row blocks
