"""The machine and software the report was produced on."""

import importlib
import os
import platform


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _simd():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    found = [f for f in ("avx512f", "avx2", "fma", "sse4_2") if f in flags]
                    return ", ".join(found) or "none of avx512f/avx2/fma/sse4_2"
    except OSError:
        pass
    return "unknown"


def _version(module):
    try:
        return importlib.import_module(module).__version__
    except Exception:  # noqa: BLE001 - any failure means "not available"
        return "not installed"


def _blas():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl not installed)"
    parts = []
    for pool in threadpool_info():
        name = pool.get("internal_api", pool.get("user_api", "?"))
        parts.append(f"{name} {pool.get('version') or ''} ({pool.get('num_threads')} threads)")
    return "; ".join(dict.fromkeys(p.replace("  ", " ") for p in parts)) or "none found"


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
    """A dict of the CPU, memory, thread settings and library versions."""
    import numba
    import psutil

    info = {
        "cpu_model": _cpu_model(),
        "simd": _simd(),
        "logical_cores": os.cpu_count(),
        "physical_cores": psutil.cpu_count(logical=False),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "available_memory_gib": round(psutil.virtual_memory().available / 2**30, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "numba_threads": numba.get_num_threads(),
        "numba_threading_layer": threading_layer(),
        "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR", "(default: __pycache__)"),
        "blas": _blas(),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg")
        else None,
    }
    for module in ("fastdr", "numba", "numpy", "scipy", "sklearn", "faiss", "metric_learn",
                   "matplotlib"):
        info[f"{module}_version"] = _version(module)
    if info["metric_learn_version"] == "not installed":
        info["metric_learn_version"] = _external_metric_learn()
    return info


def _external_metric_learn():
    """metric-learn's version in its separate environment, when there is one."""
    from . import external

    worker, _ = external.worker()
    if worker is None:
        return "not installed"
    v = worker.versions
    return (f"{v['metric_learn']} (separate environment: scikit-learn {v['sklearn']}, "
            f"Python {v['python']})")
