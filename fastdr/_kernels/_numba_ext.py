"""numba internals behind plain names: the only module of fastdr that touches them.

Private numba options (``_nrt``), ``numba.core`` and LLVM intrinsics (llvmlite) are used here
and nowhere else, so that a numba release that changes them breaks one file. Each primitive
has a native version and a plain fallback that computes the same values:

* :func:`njit_no_runtime`: ``njit`` with ``_nrt=False`` (no reference counting of array
  views); fallback plain ``njit``.
* :func:`prefetch_row`: LLVM's ``llvm.prefetch`` over a row's cache lines; fallback nothing
  (a prefetch is only a hint).
* :func:`stream_line` and :func:`store_fence`: a non-temporal 64-byte store and the fence
  that orders such stores; fallback plain stores and no fence (plain stores need none).
  :func:`stream_copy` and :func:`misalignment` build row copies on them.
* :func:`trailing_zeros`: LLVM's ``cttz``; fallback a branch-free bit count.
* :func:`on_kernel_compile`: a listener on numba's compile events (``numba.core.event``),
  which fire on a cache miss only; no fallback needed (without it nothing is announced).

Choice. A native version is probed once per process, the first time something needs it: the
option is parsed as numba would parse it, an intrinsic is compiled into a tiny function and
its result compared with a plain one. Any failure picks the fallback. The probes of the
intrinsics run while a kernel that calls them is typed, so ``import fastdr`` (and importing
the kernels) compiles nothing, and a kernel loaded from numba's cache probes nothing.
Setting ``FASTDR_NUMBA_FALLBACKS=1`` (read once) forces every fallback. A kernel compiled
with ``cache=True`` keeps the version it was compiled with, so switching needs a fresh
``NUMBA_CACHE_DIR``. Interpreted (``NUMBA_DISABLE_JIT=1``), the kernels call the Python
bodies of the functions below, which are plain versions.
"""

import functools
import os

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

#: bytes per cache line: one prefetch each, and the size of one streaming store
LINE_BYTES = 64

#: environment variable that forces every fallback when set to anything but "" or "0"
FALLBACKS_ENV = "FASTDR_NUMBA_FALLBACKS"


@functools.cache
def fallbacks_forced():
    """Whether ``FASTDR_NUMBA_FALLBACKS`` forces every fallback (read once per process)."""
    return os.environ.get(FALLBACKS_ENV, "").strip() not in ("", "0")


@functools.cache
def _native(name):
    """Whether the native version of primitive ``name`` is used (probed once)."""
    if fallbacks_forced():
        return False
    try:
        return bool(_PROBES[name]())
    except Exception:  # any failure to parse, type, lower or run the native version
        return False


def natives_in_use():
    """``{primitive: True when its native version is used}``; probes what is not known yet
    (compiling the tiny probes of the intrinsics)."""
    return {name: _native(name) for name in _PROBES}


# --- no reference counting -------------------------------------------------------------------

def _probe_no_runtime():
    from numba.core.compiler import Flags
    from numba.core.cpu import CPUTargetOptions

    return not CPUTargetOptions.parse_as_flags(Flags(), {"_nrt": False}).nrt


def njit_no_runtime(**options):
    """``numba.njit(**options)`` for code that needs no runtime: no allocation, no exception
    carrying objects. Such code is compiled without numba's reference counting (``_nrt=False``
    when numba accepts the option), so a row view or an array passed to an inlined helper
    costs no atomic counter update on a line every thread shares."""
    if _native("no_runtime"):
        options["_nrt"] = False
    return njit(**options)


# --- software prefetch -----------------------------------------------------------------------

@intrinsic
def _prefetch_row_intrinsic(typingctx, arr, row):
    """Prefetch every cache line of ``arr[row, :]`` (2-D C-contiguous array) for reading."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and arr.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        n_cols = builder.extract_value(array.shape, 1)
        index = context.cast(builder, args[1], signature.args[1], types.intp)
        item = context.get_abi_sizeof(context.get_data_type(signature.args[0].dtype))
        start = builder.bitcast(builder.gep(array.data, [builder.mul(index, n_cols)]),
                                ir.IntType(8).as_pointer())
        n_bytes = builder.mul(n_cols, ir.Constant(n_cols.type, item))
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic(
            "llvm.prefetch", [start.type],
            ir.FunctionType(ir.VoidType(), [start.type, i32, i32, i32]))
        hint = [i32(0), i32(3), i32(1)]  # read, keep in all cache levels, data
        zero = ir.Constant(n_cols.type, 0)
        with cgutils.for_range_slice(builder, zero, n_bytes,
                                     ir.Constant(n_cols.type, LINE_BYTES)) as (offset, _):
            builder.call(fn, [builder.gep(start, [offset]), *hint])
        with builder.if_then(builder.icmp_signed(">", n_bytes, zero)):
            # a row that starts inside a line ends in one more line than its size spans
            last = builder.sub(n_bytes, ir.Constant(n_cols.type, 1))
            builder.call(fn, [builder.gep(start, [last]), *hint])
        return context.get_dummy_value()

    return types.void(arr, row), codegen


def prefetch_row(arr, row):
    """Prefetch row ``row`` of a 2-D C-contiguous array: a hint that changes no value.

    A kernel that gathers scattered rows in a known order asks for the next rows while it
    works on the current one, so the cache misses overlap the work. ``row`` must be a valid
    row index (the caller's own bound holds it). Compiled, it is one ``llvm.prefetch`` per
    64-byte line of the row (or nothing, the fallback); interpreted, nothing.
    """


def _prefetch_row_native(arr, row):
    _prefetch_row_intrinsic(arr, row)


def _prefetch_row_portable(arr, row):
    pass


@overload(prefetch_row, inline="always")
def _prefetch_row_overload(arr, row):
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and arr.layout == "C"):
        return None  # row r of any other layout is not one contiguous range
    return _prefetch_row_native if _native("prefetch") else _prefetch_row_portable


def _prefetch_probe_sum(arr):
    total = 0.0
    for r in range(arr.shape[0]):
        _prefetch_row_intrinsic(arr, r)
        for c in range(arr.shape[1]):
            total += arr[r, c]
    return total


def _probe_prefetch():
    arr = np.arange(60.0).reshape(4, 15)
    return njit(_prefetch_probe_sum)(arr) == arr.sum()


# --- streaming (non-temporal) stores ---------------------------------------------------------

@intrinsic
def _stream_line_intrinsic(typingctx, dst, dst_start, src, src_start):
    """Copy one line of elements from ``src[src_start:]`` to ``dst[dst_start:]`` (1-D
    contiguous arrays of one dtype; the destination address must be 64-byte aligned) with a
    non-temporal store."""
    if dst.dtype != src.dtype:
        return None

    def codegen(context, builder, signature, args):
        dst_array = context.make_array(signature.args[0])(context, builder, args[0])
        src_array = context.make_array(signature.args[2])(context, builder, args[2])
        element = context.get_data_type(signature.args[0].dtype)
        lanes = LINE_BYTES // context.get_abi_sizeof(element)
        vector = ir.VectorType(element, lanes)
        source = builder.bitcast(builder.gep(src_array.data, [args[3]]), vector.as_pointer())
        value = builder.load(source, align=context.get_abi_sizeof(element))
        target = builder.bitcast(builder.gep(dst_array.data, [args[1]]), vector.as_pointer())
        store = builder.store(value, target, align=LINE_BYTES)
        store.set_metadata("nontemporal", builder.module.add_metadata([ir.IntType(32)(1)]))
        return context.get_dummy_value()

    return types.void(dst, types.intp, src, types.intp), codegen


@intrinsic
def _store_fence_intrinsic(typingctx):
    """A sequentially consistent fence (``mfence`` on x86): it orders streaming stores."""
    def codegen(context, builder, signature, args):
        builder.fence("seq_cst")
        return context.get_dummy_value()

    return types.void(), codegen


def stream_line(dst, dst_start, src, src_start):
    """``dst[dst_start:dst_start + lanes] = src[src_start:src_start + lanes]``, ``lanes``
    elements making one 64-byte line, for 1-D contiguous arrays of one dtype whose
    destination address ``dst[dst_start]`` is 64-byte aligned.

    Compiled, one vector load and one store tagged ``!nontemporal``: it writes the whole line
    past the caches, without first reading it from memory as a plain store to an uncached
    line does (that read doubles the memory traffic of filling a large output). The fallback,
    and the interpreted version, use plain stores.
    """
    lanes = LINE_BYTES // dst.itemsize
    dst[dst_start:dst_start + lanes] = src[src_start:src_start + lanes]


def store_fence():
    """Order the streaming stores issued so far before any later memory access.

    Streaming stores are weakly ordered on x86, so a kernel that streams calls this before
    its results are read on another thread. Nothing to do after plain stores (fallback,
    interpreted).
    """


def _stream_line_native(dst, dst_start, src, src_start):
    _stream_line_intrinsic(dst, dst_start, src, src_start)


def _stream_line_portable(dst, dst_start, src, src_start):
    for c in range(LINE_BYTES // dst.itemsize):
        dst[dst_start + c] = src[src_start + c]


def _store_fence_native():
    _store_fence_intrinsic()


def _store_fence_portable():
    pass


@overload(stream_line, inline="always")
def _stream_line_overload(dst, dst_start, src, src_start):
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array)
            and dst.dtype == src.dtype):
        return None
    return _stream_line_native if _native("stream") else _stream_line_portable


@overload(store_fence, inline="always")
def _store_fence_overload():
    return _store_fence_native if _native("stream") else _store_fence_portable


def _stream_probe_copy(dst, dst_start, src):
    _stream_line_intrinsic(dst, dst_start, src, 0)
    _store_fence_intrinsic()


def _probe_stream():
    src = np.arange(1.0, 1.0 + LINE_BYTES // 8)
    dst = np.zeros(3 * src.size)
    shift = misalignment(dst, 0)
    if shift < 0:
        return False
    start = (src.size - shift) % src.size  # the first element on a line boundary
    njit(_stream_probe_copy)(dst, start, src)
    expected = np.zeros_like(dst)
    expected[start:start + src.size] = src
    return np.array_equal(dst, expected)


@njit(cache=True, inline="always")
def stream_copy(dst, start, src, n, misalignment):
    """``dst[start:start + n] = src[:n]`` for a 1-D contiguous ``dst``. O(n).

    ``misalignment`` is ``(address of dst[0] % 64) // itemsize`` from :func:`misalignment`,
    or -1 for plain stores throughout. Otherwise every whole 64-byte line of the range is
    written with one :func:`stream_line` and the ragged head and tail with plain stores.
    """
    if misalignment < 0:
        for c in range(n):
            dst[start + c] = src[c]
        return
    lanes = LINE_BYTES // dst.itemsize
    head = min(n, (lanes - (misalignment + start) % lanes) % lanes)
    for c in range(head):
        dst[start + c] = src[c]
    c = head
    while c + lanes <= n:
        stream_line(dst, start + c, src, c)
        c += lanes
    while c < n:
        dst[start + c] = src[c]
        c += 1


def misalignment(out, min_bytes):
    """The ``misalignment`` argument of :func:`stream_copy` for a C-contiguous ``out``: -1
    (plain stores) when ``out`` is smaller than ``min_bytes`` or its address is not a
    multiple of its item size, else the element offset of its first byte within a line.

    Streaming pays only for outputs larger than the last-level cache that are read later,
    if at all: the data written are not left in cache.
    """
    address = out.__array_interface__["data"][0]
    if out.nbytes < min_bytes or address % out.itemsize or not out.flags.c_contiguous:
        return -1
    return (address % LINE_BYTES) // out.itemsize


# --- count trailing zeros --------------------------------------------------------------------

@intrinsic
def _cttz_intrinsic(typingctx, x):
    """LLVM's count-trailing-zeros of a uint64 (one instruction; undefined for 0)."""
    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], cgutils.true_bit)

    return types.uint64(types.uint64), codegen


def trailing_zeros(x):
    """Index of the lowest set bit of a non-zero uint64, as a uint64.

    Compiled, LLVM's ``cttz`` (one instruction), or the branch-free count of the fallback;
    interpreted, Python's integer bit length.
    """
    x = int(x)
    return np.uint64((x & -x).bit_length() - 1)


# masks of the branch-free bit count: alternate bits, bit pairs, nibbles, one per byte
_BITS_1 = np.uint64(0x5555555555555555)
_BITS_2 = np.uint64(0x3333333333333333)
_BITS_4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_BYTES_1 = np.uint64(0x0101010101010101)


def _trailing_zeros_native(x):
    return _cttz_intrinsic(x)


def _trailing_zeros_portable(x):
    # the bits below the lowest set bit, counted two, four, then eight at a time; every
    # constant is a uint64, as uint64 mixed with a signed integer would give a float in numba
    x = np.uint64(x)
    below = (x & (~x + np.uint64(1))) - np.uint64(1)
    below = below - ((below >> np.uint64(1)) & _BITS_1)
    below = (below & _BITS_2) + ((below >> np.uint64(2)) & _BITS_2)
    below = (below + (below >> np.uint64(4))) & _BITS_4
    return (below * _BYTES_1) >> np.uint64(56)


@overload(trailing_zeros, inline="always")
def _trailing_zeros_overload(x):
    if not isinstance(x, types.Integer):
        return None
    return _trailing_zeros_native if _native("ctz") else _trailing_zeros_portable


def _ctz_probe_fill(values, out):
    for i in range(values.size):
        out[i] = _cttz_intrinsic(values[i])


def _probe_ctz():
    values = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))
    values |= np.uint64(1) << np.uint64(63)  # a high bit set too: only the lowest counts
    out = np.zeros(64, dtype=np.uint64)
    njit(_ctz_probe_fill)(values, out)
    return np.array_equal(out, np.arange(64, dtype=np.uint64))


_PROBES = {
    "no_runtime": _probe_no_runtime,
    "prefetch": _probe_prefetch,
    "stream": _probe_stream,
    "ctz": _probe_ctz,
}


def host_cpu():
    """The CPU name and feature string LLVM compiles fastdr's kernels for (what a bug report
    about speed or a wrong answer needs): numba's ``NUMBA_CPU_NAME`` and
    ``NUMBA_CPU_FEATURES`` when set, else the host's.

    Returns
    -------
    name : str
    features : str
        LLVM's ``+feature`` list, comma-separated.
    """
    import numba
    from llvmlite import binding

    name = numba.config.CPU_NAME or binding.get_host_cpu_name()
    features = numba.config.CPU_FEATURES or binding.get_host_cpu_features().flatten()
    return name, features


def on_kernel_compile(callback):
    """Call ``callback(name)`` whenever numba starts compiling a function of fastdr (a cache
    miss: a kernel loaded from numba's disk cache triggers nothing).

    Parameters
    ----------
    callback : callable
        Called with the function's ``module.qualname``, in the compiling thread, before the
        compilation.

    Returns
    -------
    object or None
        The registered listener, or None when this numba has no event API.
    """
    try:
        from numba.core import event
    except ImportError:
        return None

    class _Listener(event.Listener):
        def on_start(self, ev):
            func = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
            module = getattr(func, "__module__", "") or ""
            if module.startswith("fastdr."):
                callback(f"{module}.{func.__qualname__}")

        def on_end(self, ev):
            pass

    listener = _Listener()
    event.register("numba:compile", listener)
    return listener
