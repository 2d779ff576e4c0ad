"""Software prefetch of array rows, for kernels that read scattered rows in a known order.

A kernel that gathers rows by index (NN-descent's local join reads each point's candidate
rows; its update pass reads the heap rows its proposals target) waits on a cache miss for
every row it has not touched lately. When the next rows are known one step ahead,
:func:`prefetch_row` asks the memory system for them while the current step computes, so the
misses overlap the work instead of following it. It is a hint: it changes no value, and a
CPU may ignore it.

Numba has no prefetch, so :func:`_prefetch_row_intrinsic` emits LLVM's ``llvm.prefetch``
(read, high locality, data cache) once per 64-byte line of the row. The interpreted kernels
(``NUMBA_DISABLE_JIT``, the coverage pass) get a Python version that does nothing.
"""

import numba
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.extending import intrinsic

#: bytes per cache line (one prefetch each)
LINE_BYTES = 64


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


if numba.config.DISABLE_JIT:  # the interpreted kernels (coverage) need a Python version
    def prefetch_row(arr, row):
        """Prefetch row ``row`` of a 2-D array (nothing to do when interpreted)."""
else:
    @njit(cache=True, inline="always")
    def prefetch_row(arr, row):
        """Prefetch row ``row`` of a 2-D C-contiguous array: a hint that changes no value.

        ``row`` must be a valid row index (the caller's own bound holds it).
        """
        _prefetch_row_intrinsic(arr, row)
