"""The row prefetch hint (``fastdr._kernels.prefetch``): it compiles for the arrays and index
types the kernels pass, touches every row of any width without faulting, and changes no value.
The kernels that use it keep their exact results (``tests/test_nndescent.py``)."""

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from fastdr._kernels.prefetch import prefetch_row


@njit
def _sum_after_prefetch(arr):
    acc = 0.0
    for r in range(arr.shape[0]):
        prefetch_row(arr, r)
        prefetch_row(arr, np.int32(r))  # candidate lists hold int32 ids
        for c in range(arr.shape[1]):
            acc += arr[r, c]
    return acc


@pytest.mark.parametrize("dtype, cols", [(np.float32, 50), (np.float64, 3), (np.int64, 15),
                                         (np.uint8, 15), (np.float32, 0)])
@pytest.mark.parametrize("offset", [0, 3])
def test_prefetch_changes_no_value(dtype, cols, offset):
    # offset 3: rows start inside a cache line, so a row can span one line more than its size
    flat = np.arange(37 * cols + offset).astype(dtype)
    arr = flat[offset:].reshape(37, cols)
    before = arr.copy()
    assert _sum_after_prefetch(arr) == before.sum(dtype=np.float64)
    np.testing.assert_array_equal(arr, before)


@pytest.mark.jit_only  # typing exists only when compiled (not under NUMBA_DISABLE_JIT)
def test_prefetch_takes_only_c_contiguous_2d_arrays():
    with pytest.raises(TypingError):
        _sum_after_prefetch(np.zeros((4, 5)).T)  # Fortran order: row r is not contiguous
