"""Thread control for kernel calls.

``n_jobs`` applies only for the length of one call: :func:`parallel_section` sets numba's
thread count (a per-thread setting in numba) and restores it in ``finally``.

Threading layer and the launch lock. Numba's ``workqueue`` layer aborts the process when two
Python threads launch parallel kernels at once; its ``tbb`` and ``omp`` layers are documented
as thread-safe (each launch gets its own team or arena). So :func:`parallel_section`
serialises launches with one process-wide lock *only* until numba reports a thread-safe
layer (``numba.threading_layer()``, known after the first launch):

* on ``workqueue`` every launch takes the lock. That is a real cost: two Python threads that
  each call fastdr with ``n_jobs=1`` run one after the other, not side by side. It is the
  layer only where TBB is missing: the ``tbb`` wheel is a dependency on Linux x86_64, and
  :mod:`.tbb` makes its library visible to numba before the first launch;
* on ``tbb`` and ``omp`` launches run concurrently, without the lock;
* until the layer is known (before the first launch ends) the lock is taken, so the first
  launches cannot race numba's layer start-up.

Unless the user chose a layer (``NUMBA_THREADING_LAYER``), the first fastdr launch asks numba
for its ``"forksafe"`` layer set (TBB where installed, else a non-GNU OpenMP, else workqueue), so
``multiprocessing`` with ``fork`` works after fastdr has run (the GNU OpenMP layer terminates
a child forked after a parallel launch).

Inside a section, numba's OpenBLAS runs single-threaded, so GEMM calls made by numba threads
(the k-NN, pairwise, NCA and MMC kernels call BLAS from inside ``prange``) do not each start
more threads; see ``_blas.py``, which also keeps that limit away from fastdr's Python-level
eigensolver steps in other threads.

The lock is re-created in a forked child, so a fork taken while another thread held it
cannot deadlock the child.
"""

import os
import threading
from contextlib import contextmanager

import numba

from .blas import launch_blas
from .tbb import load_wheel_tbb

_LAUNCH_LOCK = threading.RLock()
#: numba layers that allow concurrent launches from several Python threads
THREAD_SAFE_LAYERS = ("tbb", "omp")
_LAYER_IS_THREAD_SAFE = None  # unknown until the first launch


def _reset_lock_after_fork():
    global _LAUNCH_LOCK
    _LAUNCH_LOCK = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_lock_after_fork)


def effective_n_jobs(n_jobs):
    """Translate a scikit-learn style ``n_jobs`` into a thread count.

    Parameters
    ----------
    n_jobs : int or None
        ``None`` or ``-1`` means every thread numba has; a negative ``-k`` means all but
        ``k - 1``; a positive value is capped at numba's thread count.

    Returns
    -------
    int
        A thread count between 1 and ``numba.config.NUMBA_NUM_THREADS``.
    """
    available = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None:
        return available
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int,)) and not hasattr(
        n_jobs, "__index__"
    ):
        raise TypeError(f"n_jobs must be an int or None, got {n_jobs!r}.")
    n_jobs = int(n_jobs)
    if n_jobs == 0:
        raise ValueError(
            "n_jobs=0 is not a thread count; use None for all cores or a positive int."
        )
    if n_jobs < 0:
        return max(1, available + 1 + n_jobs)
    return min(n_jobs, available)


def _prefer_fork_safe_layer():
    """Before the first parallel launch, ask for a fork-safe layer unless the user chose one,
    and let numba find the ``tbb`` wheel's library (:mod:`.tbb`)."""
    from .settings import _CONFIG

    if _LAYER_IS_THREAD_SAFE is None:
        load_wheel_tbb()
    if (numba.config.THREADING_LAYER == "default" and _CONFIG["threading_layer"] is None
            and not os.environ.get("NUMBA_THREADING_LAYER")):
        numba.config.THREADING_LAYER = "forksafe"


def _launch_lock_needed():
    """Whether launches must be serialised: unless the layer is known to be thread-safe."""
    global _LAYER_IS_THREAD_SAFE
    if _LAYER_IS_THREAD_SAFE is None:
        try:
            layer = numba.threading_layer()
        except ValueError:  # no parallel launch has started numba's layer yet
            return True
        _LAYER_IS_THREAD_SAFE = layer in THREAD_SAFE_LAYERS
    return not _LAYER_IS_THREAD_SAFE


@contextmanager
def _launch_guard():
    if _launch_lock_needed():
        with _LAUNCH_LOCK:
            yield
    else:
        yield


@contextmanager
def parallel_section(n_jobs):
    """Run the enclosed kernel launches on ``n_jobs`` threads (see the module docstring).

    Parameters
    ----------
    n_jobs : int or None
        See :func:`effective_n_jobs`.

    Yields
    ------
    int
        The thread count in force.
    """
    threads = effective_n_jobs(n_jobs)
    # BLAS mode first, then the lock: a thread waiting for the BLAS mode never holds the lock
    with launch_blas(), _launch_guard():
        _prefer_fork_safe_layer()
        previous = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            yield threads
        finally:
            numba.set_num_threads(previous)
