"""Thread control for kernel calls.

``n_jobs`` applies only for the length of one call: :func:`parallel_section` sets numba's
thread count (a per-thread setting in numba) and restores it in ``finally``.

Threading layer. Numba's ``workqueue`` layer aborts the process when two Python threads launch
parallel kernels at once, and its GNU OpenMP layer (numba's default pick when TBB is absent)
terminates a child forked after a parallel launch. fastdr makes both safe:

* parallel kernel launches are serialised by one process-wide lock (a launch already uses
  every core it is given, so the lock costs no throughput), which makes any layer safe for
  concurrent Python threads;
* unless the user chose a layer (``NUMBA_THREADING_LAYER``), the first fastdr launch asks
  numba for its ``"forksafe"`` layer set (TBB if installed, else a non-GNU OpenMP, else
  workqueue), so ``multiprocessing`` with ``fork`` works after fastdr has run.

Inside a section scipy's OpenBLAS (the BLAS numba's ``np.dot`` calls) runs single-threaded,
so GEMM calls made by numba threads do not each start more threads (see ``_blas.py``).

The lock is re-created in a forked child, so a fork taken while another thread held it
cannot deadlock the child.
"""

import os
import threading
from contextlib import contextmanager

import numba

from ._blas import single_threaded_blas

_LAUNCH_LOCK = threading.RLock()


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
    """Before the first parallel launch, ask for a fork-safe layer unless the user chose one."""
    if numba.config.THREADING_LAYER == "default" and not os.environ.get(
        "NUMBA_THREADING_LAYER"
    ):
        numba.config.THREADING_LAYER = "forksafe"


@contextmanager
def parallel_section(n_jobs):
    """Run the enclosed kernel launches on ``n_jobs`` threads, one launch at a time.

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
    with _LAUNCH_LOCK:
        _prefer_fork_safe_layer()
        previous = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            with single_threaded_blas():
                yield threads
        finally:
            numba.set_num_threads(previous)
