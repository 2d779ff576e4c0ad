"""Keep OpenBLAS single-threaded while numba's threads call it.

Kernels that call ``np.dot`` inside ``prange`` (k-NN, pairwise distances, NCA, MMC) have every
numba thread run its own GEMMs. :func:`fastdr._parallel.parallel_section` therefore enters
:func:`single_threaded_blas` around every kernel launch. If OpenBLAS also spread each of
those GEMMs over all cores, threads would oversubscribe the machine and a kernel would run
several times slower. :func:`single_threaded_blas` sets
OpenBLAS's thread count to 1 for the length of one kernel call and restores it afterwards.
It finds OpenBLAS among the shared libraries the process has loaded (``/proc/self/maps``)
and next to the numpy and scipy packages (wheels ship it in ``numpy.libs``/``scipy.libs``
or ``.dylibs``); where no OpenBLAS is found (MKL, Accelerate), it does nothing.
"""

import ctypes
import glob
import os
import threading
from contextlib import contextmanager

_PREFIXES = ("openblas", "scipy_openblas")
_SUFFIXES = ("", "64_")
_LOCK = threading.Lock()
_CONTROLS = None
_DEPTH = 0  # how many single_threaded_blas() bodies are running
_SAVED = []  # thread counts to restore when the last one ends


def _candidate_paths():
    paths = []
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                path = line.split()[-1] if line.strip() else ""
                if "openblas" in os.path.basename(path).lower():
                    paths.append(path)
    except OSError:
        pass
    for module in ("numpy", "scipy"):
        try:
            package = __import__(module)
        except ImportError:  # pragma: no cover - both are runtime dependencies
            continue
        root = os.path.dirname(package.__file__)
        for pattern in (os.path.join(root + ".libs", "*openblas*"),
                        os.path.join(root, ".dylibs", "*openblas*"),
                        os.path.join(root, ".libs", "*openblas*")):
            paths.extend(glob.glob(pattern))
    seen = []
    for path in paths:
        real = os.path.realpath(path)
        if real not in seen and os.path.isfile(real):
            seen.append(real)
    return seen


def _load_controls():
    import scipy.linalg.cython_blas  # noqa: F401  (numba's np.dot calls this BLAS; load it)

    controls = []
    for path in _candidate_paths():
        try:
            lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if getter is not None and setter is not None:
                    getter.restype = ctypes.c_int
                    getter.argtypes = []
                    setter.restype = None
                    setter.argtypes = [ctypes.c_int]
                    controls.append((getter, setter))
                    break
            else:
                continue
            break
    return controls


def _controls():
    global _CONTROLS
    if _CONTROLS is None:
        _CONTROLS = _load_controls()
    return _CONTROLS


@contextmanager
def single_threaded_blas():
    """Run the enclosed code with every loaded OpenBLAS limited to one thread.

    Re-entrant and safe from several Python threads: the first entry saves the thread counts
    and sets them to 1, the last exit restores them. No lock is held while the body runs, so
    it cannot deadlock against :func:`fastdr._parallel.parallel_section`.
    """
    global _DEPTH, _SAVED
    with _LOCK:
        controls = _controls()
        if _DEPTH == 0:
            _SAVED = [getter() for getter, _ in controls]
            for _, setter in controls:
                setter(1)
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0:
                for (_, setter), count in zip(controls, _SAVED, strict=True):
                    setter(count)
