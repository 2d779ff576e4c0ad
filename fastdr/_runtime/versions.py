"""``fastdr.show_versions()``: what a bug report needs, in one block to paste."""

import os
import platform
import sys
from importlib import metadata


def _version(module_name):
    try:
        module = __import__(module_name)
    except ImportError:
        return "not installed"
    return getattr(module, "__version__", "unknown")


def versions():
    """The facts :func:`show_versions` prints, as a dict of section -> {name: text}.

    Returns
    -------
    dict
    """
    import numba
    import numpy as np
    import threadpoolctl

    import fastdr

    from .._kernels._numba_ext import host_cpu, natives_in_use

    try:
        layer = numba.threading_layer()
    except ValueError:  # no parallel launch yet: numba has not chosen
        layer = f"not started yet (requested: {numba.config.THREADING_LAYER})"
    from . import tbb

    try:
        tbb_version = metadata.version("tbb")
    except metadata.PackageNotFoundError:
        tbb_version = "not installed"
    if tbb._LOADED:
        tbb_version += f" (library loaded by fastdr: {tbb._LOADED})"
    cpu, features = host_cpu()
    wide = [f for f in ("avx2", "avx512f", "fma", "neon", "sve")
            if f"+{f}" in features.split(",")]
    cache = numba.config.CACHE_DIR or "beside each module (__pycache__), numba's default"
    out = {
        "System": {
            "python": sys.version.replace("\n", " "),
            "executable": sys.executable,
            "machine": platform.platform(),
            "cpu": f"{cpu} ({os.cpu_count()} logical cores; {', '.join(wide) or 'no wide'} "
                   "vector units)",
        },
        "fastdr": {
            "fastdr": fastdr.__version__,
            "numba": numba.__version__,
            "threading layer": layer,
            "tbb": tbb_version,
            "numba threads": str(numba.config.NUMBA_NUM_THREADS),
            "numba cache": cache,
            "native intrinsics": ", ".join(f"{k}={'yes' if v else 'no'}"
                                           for k, v in natives_in_use().items()),
        },
        "Dependencies": {
            name: _version(name)
            for name in ("numpy", "scipy", "sklearn", "threadpoolctl", "pandas", "dask",
                         "distributed")
        },
        "BLAS": {},
    }
    out["Dependencies"]["numpy"] = np.__version__
    for pool in threadpoolctl.threadpool_info():
        if pool.get("user_api") != "blas":
            continue
        label = f"{pool.get('internal_api', 'blas')} {pool.get('version') or ''}".strip()
        out["BLAS"][label] = (f"{pool.get('num_threads')} threads, "
                              f"{pool.get('architecture') or 'architecture unknown'}, "
                              f"{pool.get('filepath')}")
    if not out["BLAS"]:
        out["BLAS"]["none found"] = "threadpoolctl sees no BLAS library loaded"
    return out


def show_versions():
    """Print fastdr's, its dependencies' and the machine's versions for a bug report.

    Includes numba's threading layer and thread count, the numba cache directory, every BLAS
    library loaded (vendor, threads, architecture), and the CPU and vector units the kernels
    are compiled for. Paste the output into the issue.

    Examples
    --------
    >>> import fastdr
    >>> fastdr.show_versions()  # doctest: +SKIP
    """
    for section, rows in versions().items():
        print(f"\n{section}:")
        width = max(len(name) for name in rows)
        for name, text in rows.items():
            print(f"  {name:>{width}}: {text}")
