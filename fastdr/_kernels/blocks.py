"""Index arithmetic shared by the blocked kernels: the span of a block, the skipped target.

Inlined into their callers, so a call costs what the expression it names did.
"""

from numba import njit


@njit(cache=True, inline="always")
def block_span(b, size, total):
    """``(start, stop)`` of block b when ``total`` items are cut into blocks of ``size``."""
    start = b * size
    return start, min(total, start + size)


@njit(cache=True, inline="always")
def skipped_target(self_offset, i):
    """The target query row i excludes, ``i + self_offset``, or -1 (none) when the offset is
    negative."""
    return -1 if self_offset < 0 else i + self_offset
