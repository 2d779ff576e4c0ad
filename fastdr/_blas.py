"""Keep the BLAS that numba kernels call single-threaded while they run in parallel.

Numba's ``np.dot`` calls scipy's BLAS (``scipy.linalg.cython_blas``). Inside a ``prange``
loop every numba thread makes its own GEMM calls; a multi-threaded OpenBLAS would then start
its own threads on top (threads x threads, spin-waiting), which on a loaded 2-core machine
made a k-NN search 6x slower in measurements. :func:`single_threaded_blas` sets that OpenBLAS
to one thread for the length of a parallel section and restores it afterwards. For a BLAS
other than OpenBLAS (MKL, Accelerate) it does nothing.
"""

import ctypes
import os
import threading
from contextlib import contextmanager

_SETTERS = (("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
            ("openblas_set_num_threads", "openblas_get_num_threads"))
_lock = threading.Lock()
_handles = None


def _find_handles():
    """(setter, getter) pairs for the OpenBLAS libraries scipy's cython_blas loaded."""
    import scipy.linalg.cython_blas  # noqa: F401  (loads scipy's BLAS)

    handles = []
    try:
        with open("/proc/self/maps") as fh:
            paths = {line.split()[-1] for line in fh if "openblas" in line.lower()}
    except OSError:
        return handles
    for path in sorted(paths):
        # scipy's own copy (scipy.libs/ in wheels); numpy's copy is left alone
        if not path.startswith("/") or "scipy" not in os.path.basename(os.path.dirname(path)):
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _SETTERS:
            setter = getattr(lib, set_name, None)
            getter = getattr(lib, get_name, None)
            if setter is not None and getter is not None:
                getter.restype = ctypes.c_int
                setter.argtypes = [ctypes.c_int]
                handles.append((setter, getter))
                break
    return handles


def _blas_handles():
    global _handles
    if _handles is None:
        with _lock:
            if _handles is None:
                _handles = _find_handles()
    return _handles


@contextmanager
def single_threaded_blas():
    """Run the enclosed block with scipy's OpenBLAS on one thread; restore it afterwards."""
    handles = _blas_handles()
    previous = [getter() for _, getter in handles]
    for setter, _ in handles:
        setter(1)
    try:
        yield
    finally:
        for (setter, _), count in zip(handles, previous, strict=True):
            setter(count)
