"""Compile time: the first call of a method in a fresh process with an empty numba cache.

Run as a module, it times one workload's fastdr call in this process and prints one JSON line:
``python -m bench.report.coldstart WORKLOAD M D``. :func:`measure_cold` starts it with
``NUMBA_CACHE_DIR`` pointing at a new empty directory, so the numba disk cache cannot hide
compilation. Afterwards the kernels it compiled are copied into this process's numba cache where
that cache has no entry for them yet (so a fresh machine does not compile them twice), and the
directory is removed.
"""

import json
import sys
import time


def measure_cold(workload_name, m, d, *, timeout=1800):
    """Cold (first) and warm (second) call times of fastdr's implementation, in a new process.

    Returns
    -------
    dict
        ``import_s`` (``import fastdr`` and loading the method's modules), ``first_s``,
        ``second_s``, ``compile_s``
        (first minus second), or ``error``.
    """
    import subprocess
    import tempfile

    from .subprocess_env import bench_env

    with tempfile.TemporaryDirectory(prefix="fastdr-cold-cache-") as cache_dir:
        cmd = [sys.executable, "-m", "bench.report.coldstart", workload_name, str(m), str(d)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                                  env=bench_env(NUMBA_CACHE_DIR=cache_dir),
                                  cwd=bench_env.repo_root)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout} s"}
        try:
            adopt_compiled_kernels(cache_dir)
        except OSError:
            pass  # only an optimisation: the main process compiles what it lacks itself
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"exit {proc.returncode}: {tail[0][:200]}"}
    return json.loads(lines[-1])


def adopt_compiled_kernels(cache_dir):
    """Copy numba cache entries from ``cache_dir`` into this process's numba cache.

    numba files a cache entry under ``NUMBA_CACHE_DIR/<dir name>_<sha1 of the source dir>``, or
    in ``__pycache__`` next to the source when ``NUMBA_CACHE_DIR`` is unset. An entry (an index
    ``*.nbi`` and its ``*.nbc`` files) is copied only where the target has no index for that
    function yet; numba still checks each index against the source file's time stamp.

    Returns
    -------
    int
        The number of functions whose entries were copied.
    """
    import hashlib
    import os
    import shutil
    from pathlib import Path

    import numba

    import fastdr

    root = os.path.dirname(os.path.abspath(fastdr.__file__))
    copied = 0
    for source_dir in sorted({os.path.dirname(p) for p in
                              map(str, Path(root).rglob("*.py"))}):
        subpath = f"{os.path.basename(source_dir)}_" \
                  f"{hashlib.sha1(source_dir.encode()).hexdigest()}"
        origin = Path(cache_dir) / subpath
        if not origin.is_dir():
            continue
        target = (Path(numba.config.CACHE_DIR) / subpath if numba.config.CACHE_DIR
                  else Path(source_dir) / "__pycache__")
        target.mkdir(parents=True, exist_ok=True)
        for index in origin.glob("*.nbi"):
            if (target / index.name).exists():
                continue
            stem = index.name[: -len(".nbi")]
            for data_file in origin.glob(f"{stem}.*.nbc"):
                shutil.copy2(data_file, target / data_file.name)
            shutil.copy2(index, target / index.name)
            copied += 1
    return copied


def _main(argv):
    workload_name, m, d = argv[0], int(argv[1]), int(argv[2])
    from .workloads import BY_NAME

    workload = BY_NAME[workload_name]
    start = time.perf_counter()
    import fastdr  # noqa: F401  (timed: importing fastdr must compile nothing)

    workload.fastdr.available()  # loads the modules behind the method's public names
    import_s = time.perf_counter() - start
    data = workload.data(m, d, profile="smoke", headline=True)
    impl = workload.fastdr

    def call():  # fit and predict together for predict-only workloads
        state = impl.prepare(data) if impl.prepare else None
        impl.run(data, state)

    start = time.perf_counter()
    call()
    first = time.perf_counter() - start
    start = time.perf_counter()
    call()
    second = time.perf_counter() - start
    print(json.dumps({"import_s": import_s, "first_s": first, "second_s": second,
                      "compile_s": max(0.0, first - second)}))


if __name__ == "__main__":
    _main(sys.argv[1:])
