"""Keep numba's BLAS single-threaded while numba's threads call it, without racing other users.

Kernels that call ``np.dot`` inside ``prange`` (k-NN, pairwise distances, NCA, MMC) have every
numba thread run its own GEMMs. If OpenBLAS also spread each of those GEMMs over all cores,
threads would oversubscribe the machine and a kernel would run several times slower. So
:func:`fastdr._runtime.threads.parallel_section` enters :func:`launch_blas` around every kernel
launch, which sets OpenBLAS's thread count to 1 and restores it when the last launch ends.

Which OpenBLAS. numba's ``np.dot`` calls the BLAS behind ``scipy.linalg.cython_blas``. Only
that library is limited around launches: where numpy ships its own OpenBLAS (numpy wheels:
``numpy.libs``), numpy's is left alone, so ``np.dot``, ``@`` and ``np.linalg`` in other
threads never see the limit. (:func:`single_threaded_blas`, for NCA's and MMC's optimiser
loops, limits numpy's copy too.) Where one OpenBLAS serves both (a system build), that one is
limited. MKL, BLIS and FlexiBLAS are limited the same way, through their own thread-count
calls; a BLAS without one (Accelerate) is left alone. The libraries are listed once, at the
first launch, by threadpoolctl (which knows every vendor's symbols and file names).

Other threads. OpenBLAS's thread count is process-wide (the pthreads builds have no
per-thread setting), so a scipy BLAS or LAPACK call made in another thread while a launch
runs gets 1 thread instead of the caller's count, and OpenBLAS results depend on the thread
count in the last bits (measured: Isomap embeddings differ by up to 6e-10 and LLE by 3e-13
between 1 and 2 OpenBLAS threads). :func:`caller_blas_threads` is the remedy for Python-level
scipy BLAS steps (eigensolvers): it and the launch limit exclude each other, so its body
always runs at the caller's count whatever other threads do. scipy BLAS calls that run
outside it (user code in another thread, or fastdr steps not wrapped in it) may still meet
the limit while a launch runs.

Why ctypes around launches and not threadpoolctl's context manager: entering and leaving
``threadpool_limits(1, "blas")`` lists every loaded library each time, and even a cached
``ThreadpoolController.limit`` costs far more than a direct ctypes call (bench/DECISIONS.md);
kernels are launched many times per fit (NCA: every L-BFGS step). So threadpoolctl finds the
libraries once, and each launch sets and restores the counts through ctypes.

Every lock is re-created in a forked child (``os.register_at_fork``), and the child forgets
bodies that were running in other threads of the parent (restoring their thread counts), so
a fork taken while another thread is inside fastdr cannot deadlock or pin the child.
"""

import ctypes
import os
import threading
from contextlib import contextmanager

_PREFIXES = ("openblas", "scipy_openblas")
_SUFFIXES = ("", "64_")
PINNED, CALLER = 0, 1  # the two modes: numba's BLAS limited to 1 thread, or at the caller's
_COND = threading.Condition(threading.Lock())  # guards everything below
_CONTROLS = None  # (numba's BLAS controls, numpy's own OpenBLAS controls)
_ACTIVE = [0, 0]  # threads running in each mode
_CALLER_WAITING = [0]  # threads waiting to enter CALLER
_SAVED = []  # numba's OpenBLAS thread counts to restore when the last PINNED body ends
_OTHERS_DEPTH = 0  # single_threaded_blas() bodies running (they also limit numpy's OpenBLAS)
_OTHERS_SAVED = []
_LOCAL = threading.local()  # .stack: this thread's nested modes, innermost last


#: Per BLAS vendor (threadpoolctl's ``internal_api``), the (getter, setter) symbol names of
#: its process-wide thread count, tried in order.
_VENDOR_CALLS = {
    "openblas": [(f"{prefix}_get_num_threads{suffix}", f"{prefix}_set_num_threads{suffix}")
                 for prefix in _PREFIXES for suffix in _SUFFIXES],
    "mkl": [("MKL_Get_Max_Threads", "MKL_Set_Num_Threads")],
    "blis": [("bli_thread_get_num_threads", "bli_thread_set_num_threads")],
    "flexiblas": [("flexiblas_get_num_threads", "flexiblas_set_num_threads")],
}


def _blas_libraries():
    """(real path, vendor) of every BLAS library loaded in the process, found by
    threadpoolctl (OpenBLAS, MKL, BLIS, FlexiBLAS; a scipy dependency through
    scikit-learn), once per process."""
    from threadpoolctl import threadpool_info

    found = []
    for pool in threadpool_info():
        if pool.get("user_api") != "blas" or not pool.get("filepath"):
            continue
        path = os.path.realpath(pool["filepath"])
        if path not in [p for p, _ in found]:
            found.append((path, pool.get("internal_api", "")))
    return found


def _library_dirs(module):
    try:
        package = __import__(module)
    except ImportError:  # pragma: no cover - both are runtime dependencies
        return []
    root = os.path.dirname(package.__file__)
    return [root + ".libs", os.path.join(root, ".dylibs"), os.path.join(root, ".libs")]


def _split_numpy_own(libraries):
    """(the BLAS libraries numba may call, numpy's own separate copies): numba's ``np.dot``
    calls scipy's BLAS; numpy wheels ship a second OpenBLAS of their own, left alone."""
    numpy_dirs = [os.path.realpath(d) + os.sep for d in _library_dirs("numpy")]
    own = [lib for lib in libraries if any(lib[0].startswith(d) for d in numpy_dirs)]
    others = [lib for lib in libraries if lib not in own]
    return (others, own) if others else (libraries, [])


def _numba_blas_paths():
    """The paths of the BLAS libraries numba may call."""
    import scipy.linalg.cython_blas  # noqa: F401  (numba's np.dot calls this BLAS; load it)

    return [path for path, _ in _split_numpy_own(_blas_libraries())[0]]


def _load_controls():
    import scipy.linalg.cython_blas  # noqa: F401  (numba's np.dot calls this BLAS; load it)

    numba_libs, numpy_own = _split_numpy_own(_blas_libraries())
    return _controls_of(numba_libs), _controls_of(numpy_own)


def _open(path):
    """The already loaded library at ``path`` (RTLD_NOLOAD: never loads a second copy)."""
    return ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_GLOBAL)


def _controls_of(libraries):
    controls = []
    for path, vendor in libraries:
        try:
            lib = _open(path)
        except OSError:
            continue
        for get_name, set_name in _VENDOR_CALLS.get(vendor, ()):
            getter = getattr(lib, get_name, None)
            setter = getattr(lib, set_name, None)
            if getter is not None and setter is not None:
                getter.restype = ctypes.c_int
                getter.argtypes = []
                setter.restype = None
                setter.argtypes = [ctypes.c_int]
                controls.append((getter, setter))
                break
    return controls


def controlled_thread_counts(numpy_own=False):
    """Current thread count of each OpenBLAS numba calls (or of numpy's own copies)."""
    with _COND:
        return [getter() for getter, _ in _controls(numpy_own)]


def _controls(numpy_own=False):
    global _CONTROLS
    if _CONTROLS is None:
        _CONTROLS = _load_controls()
    return _CONTROLS[1 if numpy_own else 0]


def _set_counts(controls, counts):
    for (_, setter), count in zip(controls, counts, strict=True):
        setter(count)


def _stack():
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    return stack


def _join(mode):
    """Count this thread into ``mode`` once no thread runs in the other one (holds _COND).

    A thread waiting for CALLER also holds back new PINNED entries, so a stream of launches
    from other threads cannot starve it (the running launches end, then it enters).
    """
    if mode == CALLER:
        _CALLER_WAITING[0] += 1
        try:
            while _ACTIVE[PINNED]:
                _COND.wait()
        finally:
            _CALLER_WAITING[0] -= 1
            _COND.notify_all()
    else:
        while _ACTIVE[CALLER] or _CALLER_WAITING[0]:
            _COND.wait()
    if mode == PINNED and _ACTIVE[PINNED] == 0:
        global _SAVED
        controls = _controls()
        _SAVED = [getter() for getter, _ in controls]
        _set_counts(controls, [1] * len(controls))
    _ACTIVE[mode] += 1


def _part(mode):
    """Count this thread out of ``mode`` (holds _COND)."""
    _ACTIVE[mode] -= 1
    if mode == PINNED and _ACTIVE[PINNED] == 0:
        _set_counts(_controls(), _SAVED)
    _COND.notify_all()


@contextmanager
def _mode(mode):
    stack = _stack()
    if stack and mode == CALLER and stack[-1] == PINNED:
        # inside a launch or a single_threaded_blas() body the enclosing limit stands: the
        # body asked for one thread, and switching here could wait on a launch lock this
        # thread holds
        mode = PINNED
    if stack and stack[-1] == mode:  # nested in the same mode: nothing changes
        stack.append(mode)
        try:
            yield
        finally:
            stack.pop()
        return
    with _COND:
        if stack:  # this thread leaves its outer mode while the body runs (no deadlock:
            _part(stack[-1])  # a counted thread is never itself waiting)
        try:
            _join(mode)
        except BaseException:
            if stack:
                _join(stack[-1])
            raise
        stack.append(mode)
    try:
        yield
    finally:
        with _COND:
            stack.pop()
            _part(mode)
            if stack:
                _join(stack[-1])


def launch_blas():
    """Run the enclosed kernel launch with numba's OpenBLAS limited to one thread.

    Used by :func:`fastdr._runtime.threads.parallel_section`. Re-entrant and safe from several
    Python threads: the first entry saves the thread counts and sets them to 1, the last exit
    restores them. Waits while any thread runs inside :func:`caller_blas_threads`. No lock is
    held while the body runs.
    """
    return _mode(PINNED)


@contextmanager
def single_threaded_blas():
    """Like :func:`launch_blas`, and numpy's own OpenBLAS is limited to one thread too.

    For fits whose Python-level steps between kernel launches are many small BLAS calls
    (NCA's optimiser, MMC's small eigendecompositions), where OpenBLAS threads would only add
    synchronisation and keep spinning into the next launch. While the body runs, BLAS calls
    in other threads get one thread too, and :func:`caller_blas_threads` bodies in other
    threads wait for it to end.
    """
    global _OTHERS_DEPTH, _OTHERS_SAVED
    with _mode(PINNED):
        with _COND:
            if _OTHERS_DEPTH == 0:
                others = _controls(numpy_own=True)
                _OTHERS_SAVED = [getter() for getter, _ in others]
                _set_counts(others, [1] * len(others))
            _OTHERS_DEPTH += 1
            _LOCAL.others = getattr(_LOCAL, "others", 0) + 1
        try:
            yield
        finally:
            with _COND:
                _LOCAL.others -= 1
                _OTHERS_DEPTH -= 1
                if _OTHERS_DEPTH == 0:
                    _set_counts(_controls(numpy_own=True), _OTHERS_SAVED)


def caller_blas_threads():
    """Run the enclosed Python-level scipy BLAS/LAPACK work at the caller's thread count.

    Waits until no thread runs a kernel launch (which limits OpenBLAS to one thread), and
    keeps new launches waiting until the body ends, so the body's BLAS calls always use the
    same thread count and give the same result whatever other threads do. A kernel launch
    inside the body (same thread) is allowed: the body's mode is left for its length.
    Entered inside a launch or a :func:`single_threaded_blas` body, it keeps that body's
    one-thread limit (and waits for nothing). Re-entrant; no lock is held while the body
    runs. Usable as a decorator: ``@caller_blas_threads()``.
    """
    return _mode(CALLER)


def _reset_after_fork():
    """In a forked child: new lock; forget other threads' bodies; restore their counts."""
    global _COND, _OTHERS_DEPTH
    _COND = threading.Condition(threading.Lock())
    stack = getattr(_LOCAL, "stack", None) or []
    mine = stack[-1] if stack else None
    if _ACTIVE[PINNED] and mine != PINNED:
        _set_counts(_controls(), _SAVED)
    _ACTIVE[PINNED] = 1 if mine == PINNED else 0
    _ACTIVE[CALLER] = 1 if mine == CALLER else 0
    _CALLER_WAITING[0] = 0
    my_others = getattr(_LOCAL, "others", 0)
    if _OTHERS_DEPTH and not my_others:
        _set_counts(_controls(numpy_own=True), _OTHERS_SAVED)
    _OTHERS_DEPTH = my_others


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
