"""The machine and software the report was produced on."""

import importlib
import os
import platform


def _cpuinfo(key):
    try:
        with open("/proc/cpuinfo") as fh:
            return next((line.split(":", 1)[1].strip() for line in fh if line.startswith(key)),
                        None)
    except OSError:
        return None


def _simd():
    flags = _cpuinfo("flags")
    if flags is None:
        return "unknown"
    found = [f for f in ("avx512f", "avx2", "fma", "sse4_2") if f in flags.split()]
    return ", ".join(found) or "none of avx512f/avx2/fma/sse4_2"


def _version(module):
    try:
        return importlib.import_module(module).__version__
    except Exception:  # noqa: BLE001 - any failure means "not available"
        return "not installed"


def _blas():
    from threadpoolctl import threadpool_info  # a scikit-learn dependency

    parts = [f"{p.get('internal_api', p.get('user_api', '?'))} {p.get('version') or ''} "
             f"({p.get('num_threads')} threads"
             + (f", {p['architecture']} kernels" if p.get("architecture") else "") + ")"
             for p in threadpool_info()]
    parts = [part.replace("  ", " ") for part in parts]
    return "; ".join(dict.fromkeys(parts)) or "none found"


def threading_layer():
    """numba's threading layer, after running one small parallel fastdr kernel."""
    import numba
    import numpy as np

    try:
        return numba.threading_layer()
    except ValueError:
        pass
    try:
        import fastdr

        fastdr.pairwise_distances(np.zeros((4, 2)))
        return numba.threading_layer()
    except Exception as exc:  # noqa: BLE001
        return f"unknown ({type(exc).__name__})"


def machine_info():
    """The CPU, memory, thread settings and library versions (metric-learn's separate
    environment is not asked: see :func:`external_metric_learn_version`)."""
    import numba
    import psutil

    # the layer first: it launches through fastdr, which picks the layer users get (its
    # fork-safe choice); numba.get_num_threads() before any launch would start numba's
    # default layer instead, and every timing after it would measure that one
    layer = threading_layer()
    memory = psutil.virtual_memory()
    info = {
        "cpu_model": _cpuinfo("model name") or platform.processor() or platform.machine(),
        "simd": _simd(), "logical_cores": os.cpu_count(),
        "physical_cores": psutil.cpu_count(logical=False),
        "memory_gib": round(memory.total / 2**30, 1),
        "available_memory_gib": round(memory.available / 2**30, 1),
        "os": platform.platform(), "python": platform.python_version(),
        "numba_threads": numba.get_num_threads(), "numba_threading_layer": layer,
        "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR", "(default: __pycache__)"),
        "openblas_thread_timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT", "(unset)"),
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "(unset: detected)"),
        "blas": _blas(),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg")
        else None,
    }
    for module in ("fastdr", "numba", "numpy", "scipy", "sklearn", "faiss", "metric_learn",
                   "matplotlib"):
        info[f"{module}_version"] = _version(module)
    return info


def external_metric_learn_version():
    """metric-learn's version from the separate environment if this run started its worker."""
    from bench import external

    running = external.running_worker()
    if running is None:
        return None
    v = running.versions
    return (f"{v['metric_learn']} (separate environment: scikit-learn {v['sklearn']}, "
            f"Python {v['python']})")


def provenance(command):
    """Where the numbers come from: the git commit, whether the tree had uncommitted changes,
    and the command line (so a reader can rerun it)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]

    def git(*args):
        try:
            done = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                  text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    status = git("status", "--porcelain", "--untracked-files=no")
    return {"git_commit": git("rev-parse", "HEAD") or "unknown (not a git checkout)",
            "git_dirty": None if status is None else bool(status),
            "command": command}
