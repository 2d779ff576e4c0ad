"""Say once per process that kernels are compiling, so that a first call does not look like
a hang.

numba compiles a kernel on its first call and caches it on disk; a later process loads it.
When a fastdr kernel misses the cache (numba's compile event, :func:`fastdr._kernels.
_numba_ext.on_kernel_compile`), the first time in the process, fastdr logs one INFO line on
the ``"fastdr"`` logger and, when the fit running on that thread has ``verbose >= 1``,
prints it on stdout. Later compilations in the same process say nothing.
"""

import logging
import threading

_LOG = logging.getLogger("fastdr")
_LOCK = threading.Lock()
_STATE = {"installed": False, "said": False}
_THREAD = threading.local()  # .verbose: the verbose level of the fit on this thread


def set_thread_verbose(verbose):
    """Record the verbose level of the fit starting on this thread (its StageLog)."""
    _THREAD.verbose = verbose


def install():
    """Listen for numba compiling fastdr's kernels (once per process; idempotent)."""
    with _LOCK:
        if _STATE["installed"]:
            return
        _STATE["installed"] = True
    from .._kernels._numba_ext import on_kernel_compile

    on_kernel_compile(_announce)


def message(first):
    """The notice for the first kernel compiled, ``first`` (module.qualname)."""
    import numba

    where = numba.config.CACHE_DIR or "__pycache__ folders beside fastdr's modules"
    return (f"compiling kernels for first use (starting with {first.rsplit('.', 1)[-1]}): "
            f"seconds to a minute, once; they are cached afterwards in {where}, and later "
            "processes load them. `python -m fastdr warmup` compiles the common ones ahead "
            "of time.")


def _announce(first):
    with _LOCK:
        if _STATE["said"]:
            return
        _STATE["said"] = True
    text = message(first)
    _LOG.info(text)
    if getattr(_THREAD, "verbose", 0) >= 1:
        print(f"[fastdr] {text}", flush=True)
