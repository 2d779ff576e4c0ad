"""The numba internals of ``fastdr._kernels._numba_ext``: every native primitive and every
fallback gives the values of a plain reference, the public names pick a version, and
``FASTDR_NUMBA_FALLBACKS=1`` forces the fallbacks. The kernels that use them keep their exact
results either way (``ci/checked_kernels.sh`` runs the kernel tests with the fallbacks forced)."""

import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from fastdr._kernels import _numba_ext as ext

#: the native versions need compiled code (their intrinsics have no Python body)
NATIVE = pytest.mark.skipif(numba.config.DISABLE_JIT,
                            reason="intrinsics are not callable when NUMBA_DISABLE_JIT=1")


def _row_sum_after(prefetch):
    @njit
    def row_sum(arr):
        acc = 0.0
        for r in range(arr.shape[0]):
            prefetch(arr, r)
            prefetch(arr, np.int32(r))  # candidate lists hold int32 ids
            for c in range(arr.shape[1]):
                acc += arr[r, c]
        return acc

    return row_sum


_PREFETCHES = {
    "public": ext.prefetch_row,
    "native": pytest.param(njit(ext._prefetch_row_native), marks=NATIVE),
    "fallback": njit(ext._prefetch_row_portable),
}


@pytest.mark.parametrize("version", list(_PREFETCHES.values()), ids=list(_PREFETCHES))
@pytest.mark.parametrize("dtype, cols", [(np.float32, 50), (np.float64, 3), (np.int64, 15),
                                         (np.uint8, 15), (np.float32, 0)])
@pytest.mark.parametrize("offset", [0, 3])
def test_prefetch_changes_no_value(version, dtype, cols, offset):
    # offset 3: rows start inside a cache line, so a row can span one line more than its size
    flat = np.arange(37 * cols + offset).astype(dtype)
    arr = flat[offset:].reshape(37, cols)
    before = arr.copy()
    assert _row_sum_after(version)(arr) == before.sum(dtype=np.float64)
    np.testing.assert_array_equal(arr, before)


@pytest.mark.jit_only  # typing exists only when compiled (not under NUMBA_DISABLE_JIT)
def test_prefetch_takes_only_c_contiguous_2d_arrays():
    with pytest.raises(TypingError):
        _row_sum_after(ext.prefetch_row)(np.zeros((4, 5)).T)  # row r is not contiguous


def _ctz_values(rng):
    bits = np.arange(64, dtype=np.uint64)
    single = np.left_shift(np.uint64(1), bits)
    with_higher = single | (single << np.uint64(1)) | np.uint64(1 << 63)
    draws = rng.integers(1, 2**63, size=2000, dtype=np.int64).astype(np.uint64)
    shifted = draws << (bits[rng.integers(0, 64, size=draws.size)])
    values = np.concatenate([single, with_higher, draws, shifted])
    return values[values != 0]


def _ctz_reference(values):
    return np.array([(int(v) & -int(v)).bit_length() - 1 for v in values], dtype=np.uint64)


def _ctz_all(ctz):
    @njit
    def ctz_all(values, out):
        for i in range(values.size):
            out[i] = ctz(values[i])

    return ctz_all


_CTZS = {
    "public": ext.trailing_zeros,
    "native": pytest.param(njit(ext._trailing_zeros_native), marks=NATIVE),
    "fallback": njit(ext._trailing_zeros_portable),
}


@pytest.mark.parametrize("version", list(_CTZS.values()), ids=list(_CTZS))
def test_trailing_zeros_matches_the_reference(rng, version):
    values = _ctz_values(rng)
    out = np.zeros(values.size, dtype=np.uint64)
    with np.errstate(over="ignore"):  # interpreted, the fallback's uint64 product wraps
        _ctz_all(version)(values, out)
    np.testing.assert_array_equal(out, _ctz_reference(values))
    assert out.dtype == np.uint64


def test_trailing_zeros_from_python():
    for bit in (0, 1, 7, 31, 62, 63):
        value = np.uint64(1) << np.uint64(bit)
        assert ext.trailing_zeros(value | (value << np.uint64(1))) == bit


def _copy_lines(line, fence):
    @njit
    def copy_lines(dst, first, src, n_lines, lanes):
        for t in range(n_lines):
            line(dst, first + t * lanes, src, t * lanes)
        fence()

    return copy_lines


_STREAMS = {
    "public": (ext.stream_line, ext.store_fence),
    "native": pytest.param((njit(ext._stream_line_native), njit(ext._store_fence_native)),
                           marks=NATIVE),
    "fallback": (njit(ext._stream_line_portable), njit(ext._store_fence_portable)),
}


@pytest.mark.parametrize("version", list(_STREAMS.values()), ids=list(_STREAMS))
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint8])
def test_stream_lines_write_what_plain_stores_write(version, dtype):
    lanes = ext.LINE_BYTES // np.dtype(dtype).itemsize
    src = (np.arange(5 * lanes) % 251 + 1).astype(dtype)
    for offset in (0, 1, lanes - 1):  # every view start lands on a different line offset
        buffer = np.zeros(9 * lanes, dtype=dtype)
        dst = buffer[offset:]
        first = (lanes - ext.misalignment(dst, 0)) % lanes  # the first line boundary
        _copy_lines(*version)(dst, first, src, 5, lanes)
        expected = np.zeros_like(dst)
        expected[first:first + src.size] = src
        np.testing.assert_array_equal(dst, expected)


@pytest.mark.jit_only  # typing exists only when compiled
def test_stream_line_takes_only_one_dtype():
    with pytest.raises(TypingError):
        _copy_lines(ext.stream_line, ext.store_fence)(
            np.zeros(64), 0, np.zeros(64, dtype=np.float32), 1, 8)


def test_njit_no_runtime_compiles_a_working_function():
    def add_rows(a, out):
        for j in range(a.shape[1]):
            out[j] = a[0, j] + a[1, j]

    kernel = ext.njit_no_runtime()(add_rows)
    a = np.arange(10.0).reshape(2, 5)
    out = np.zeros(5)
    kernel(a, out)
    np.testing.assert_array_equal(out, a[0] + a[1])
    if not numba.config.DISABLE_JIT:
        native = ext.natives_in_use()["no_runtime"]
        assert kernel.targetoptions.get("_nrt", True) is (not native)


@pytest.mark.parametrize("value, forced", [(None, False), ("", False), ("0", False),
                                           ("1", True), ("yes", True)])
def test_the_switch_reads_the_environment(monkeypatch, value, forced):
    if value is None:
        monkeypatch.delenv(ext.FALLBACKS_ENV, raising=False)
    else:
        monkeypatch.setenv(ext.FALLBACKS_ENV, value)
    assert ext.fallbacks_forced.__wrapped__() is forced


@pytest.mark.jit_only  # the probes compile
def test_every_native_version_is_used_unless_forced():
    used = ext.natives_in_use()
    assert set(used) == {"no_runtime", "prefetch", "stream", "ctz"}
    # the declared numba versions accept every native version on the CI platforms; a probe
    # that now fails means a numba change broke one, silently slowing kernels down
    assert all(used.values()) is not ext.fallbacks_forced(), used


_FORCED_CHILD = """
import numpy as np
from numba import njit
from fastdr._kernels import _numba_ext as ext

@njit
def run(arr, values, out, dst, src):
    for r in range(arr.shape[0]):
        ext.prefetch_row(arr, r)
    for i in range(values.size):
        out[i] = ext.trailing_zeros(values[i])
    ext.stream_line(dst, 0, src, 0)
    ext.store_fence()

values = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))
out = np.zeros(64, dtype=np.uint64)
src = np.arange(1.0, 9.0)
dst = np.zeros(8)
run(np.ones((3, 4)), values, out, dst, src)
assert np.array_equal(out, np.arange(64, dtype=np.uint64)), out
assert np.array_equal(dst, src), dst
options = ext.njit_no_runtime(nogil=True)(lambda: 0).targetoptions
assert "_nrt" not in options, options
print(sorted(name for name, native in ext.natives_in_use().items() if native))
"""


@pytest.mark.jit_only  # a subprocess that compiles
def test_the_switch_forces_every_fallback(tmp_path):
    env = dict(os.environ, FASTDR_NUMBA_FALLBACKS="1", NUMBA_CACHE_DIR=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", _FORCED_CHILD], env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[-2] == "[]"
