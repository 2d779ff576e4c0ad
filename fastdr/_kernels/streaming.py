"""Non-temporal (streaming) stores for outputs far larger than the caches.

A plain store to a line that is not cached first reads the line from memory (a
read-for-ownership), so filling an array once costs twice its size in memory traffic. A
non-temporal store writes whole 64-byte lines past the caches, so filling the array costs
its size once (bench: pairwise). The data are then not in cache, which only pays when the
output is larger
than the last-level cache and is read later, if at all (a 10,000 x 10,000 distance matrix).

Numba has no streaming store, so :func:`_stream_line` is an LLVM intrinsic: one vector load
of a line's worth of elements and one 64-byte aligned store tagged ``!nontemporal`` (a hint:
targets without such stores emit a plain one). :func:`stream_copy` writes the unaligned head
and tail of a row with plain stores. Streaming stores are weakly ordered on x86, so a kernel
that streams ends with :func:`store_fence` before its results are read on another thread.
"""

import numba
from llvmlite import ir
from numba import njit, types
from numba.core.extending import intrinsic

#: bytes per cache line and per streaming store
LINE_BYTES = 64


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


if numba.config.DISABLE_JIT:  # the interpreted kernels (coverage) need Python versions
    def _stream_line(dst, dst_start, src, src_start):
        """Copy one line of elements (plain stores when interpreted)."""
        lanes = LINE_BYTES // dst.itemsize
        dst[dst_start:dst_start + lanes] = src[src_start:src_start + lanes]

    def store_fence():
        """Order streaming stores (nothing to do when interpreted)."""
else:
    @njit(cache=True, inline="always")
    def _stream_line(dst, dst_start, src, src_start):
        """Copy one line of elements with a non-temporal store."""
        _stream_line_intrinsic(dst, dst_start, src, src_start)

    @njit(cache=True, inline="always")
    def store_fence():
        """Order the streaming stores issued so far before any later memory access."""
        _store_fence_intrinsic()


@njit(cache=True, inline="always")
def stream_copy(dst, start, src, n, misalignment):
    """``dst[start:start + n] = src[:n]`` for a 1-D contiguous ``dst``.

    ``misalignment`` is ``(address of dst[0] % 64) // itemsize`` from :func:`misalignment`,
    or -1 for plain stores throughout. Otherwise every whole 64-byte line of the range is
    written with one streaming store and the ragged head and tail with plain ones.
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
        _stream_line(dst, start + c, src, c)
        c += lanes
    while c < n:
        dst[start + c] = src[c]
        c += 1


def misalignment(out, min_bytes):
    """The ``misalignment`` argument of :func:`stream_copy` for a C-contiguous ``out``: -1
    (plain stores) when ``out`` is smaller than ``min_bytes`` or its address is not a
    multiple of its item size, else the element offset of its first byte within a line."""
    address = out.__array_interface__["data"][0]
    if out.nbytes < min_bytes or address % out.itemsize or not out.flags.c_contiguous:
        return -1
    return (address % LINE_BYTES) // out.itemsize
