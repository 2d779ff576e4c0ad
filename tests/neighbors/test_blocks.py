import numpy as np

from fastdr.neighbors._blocks import query_block, self_offset, skip_targets


def test_self_offset_and_the_skipped_targets():
    assert self_offset(True) == 0 and self_offset(False) == -1
    assert skip_targets(3, self_offset(False)).tolist() == [-1, -1, -1]
    assert skip_targets(3, self_offset(True)).tolist() == [0, 1, 2]
    # query rows 5:8 of a self query skip targets 5, 6 and 7
    np.testing.assert_array_equal(skip_targets(3, 5), [5, 6, 7])


def test_query_block_four_iterations_per_thread_within_bounds():
    assert query_block(1000, 2) == 125
    assert query_block(10, 2) == 16 and query_block(10**6, 2) == 256
    assert query_block(10, 2, (1, 64)) == 2
    assert query_block(10**6, 2, (1, 64)) == 64
