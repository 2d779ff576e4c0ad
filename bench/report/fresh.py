"""Measurements in a fresh Python process, each printing one JSON line.

``python -m bench.report.fresh memory WORKLOAD IMPL M D``: one call's peak RSS after a warm-up
on 100 points. ``python -m bench.report.fresh cold WORKLOAD M D``: ``import fastdr`` and the
first and second call of fastdr's implementation (fit included), run by :func:`measure_cold`
with an empty ``NUMBA_CACHE_DIR``.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _run_fresh(args, timeout, **env_overrides):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.update(env_overrides)
    try:
        proc = subprocess.run([sys.executable, "-m", "bench.report.fresh", *map(str, args)],
                              capture_output=True, text=True, env=env, cwd=REPO_ROOT,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"exit {proc.returncode}: {tail[0][:200]}"}
    return json.loads(lines[-1])


def measure_memory(workload_name, impl_label, m, d, *, timeout=3600):
    """``baseline_bytes``, ``peak_bytes``, ``increase_bytes`` of one call, or ``error``."""
    return _run_fresh(("memory", workload_name, impl_label, m, d), timeout)


def measure_cold(workload_name, m, d, *, timeout=1800):
    """``import_s``, ``first_s``, ``second_s``, ``compile_s`` with an empty numba cache, or
    ``error``; then the kernels compiled seed this process's numba cache."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fastdr-cold-cache-") as cache_dir:
        result = _run_fresh(("cold", workload_name, m, d), timeout, NUMBA_CACHE_DIR=cache_dir)
        try:
            adopt_compiled_kernels(cache_dir)
        except OSError:
            pass  # only an optimisation: the main process compiles what it lacks itself
    return result


def adopt_compiled_kernels(cache_dir):
    """Copy numba cache entries (``*.nbi`` and its ``*.nbc``) of fastdr's sources from
    ``cache_dir`` where this process's cache has none; return how many."""
    import hashlib
    import shutil

    import numba

    import fastdr

    root = Path(fastdr.__file__).resolve().parent
    copied = 0
    for source_dir in sorted({str(p.parent) for p in root.rglob("*.py")}):
        subpath = f"{os.path.basename(source_dir)}_{hashlib.sha1(source_dir.encode()).hexdigest()}"
        origin = Path(cache_dir) / subpath
        if not origin.is_dir():
            continue
        target = (Path(numba.config.CACHE_DIR) / subpath if numba.config.CACHE_DIR
                  else Path(source_dir) / "__pycache__")
        target.mkdir(parents=True, exist_ok=True)
        for index in origin.glob("*.nbi"):
            if (target / index.name).exists():
                continue
            for data_file in origin.glob(f"{index.name[:-len('.nbi')]}.*.nbc"):
                shutil.copy2(data_file, target / data_file.name)
            shutil.copy2(index, target / index.name)
            copied += 1
    return copied


def _memory(workload, impl_label, m, d):
    import gc

    from bench.engine import StepPeak, measure

    impl = next(i for i in workload.impls() if i.label == impl_label)
    measure(impl, workload.data(min(m, 100), d, profile="smoke"), min_repeats=0, max_repeats=0)
    data = workload.data(m, d, profile="smoke")
    state = impl.prepare(data) if impl.prepare else None
    gc.collect()
    start = time.perf_counter()
    with StepPeak() as peak:
        result = impl.run(data, state)
    seconds = time.perf_counter() - start
    del result
    return {"baseline_bytes": peak.baseline, "peak_bytes": peak.peak,
            "increase_bytes": peak.increase, "method": peak.method, "seconds": seconds,
            "pid": os.getpid()}


def _cold(workload, m, d, import_started):
    from dataclasses import replace

    from bench.engine import measure

    workload.fastdr.available()  # loads the modules behind the method's public names
    import_s = time.perf_counter() - import_started
    impl = workload.fastdr
    if impl.prepare is not None:  # time fit and predict together: both compile kernels
        impl = replace(impl, prepare=None,
                       run=lambda data, _: workload.fastdr.run(data, workload.fastdr.prepare(
                           data)))
    found, _ = measure(impl, workload.data(m, d, profile="smoke", headline=True),
                       min_repeats=1, max_repeats=1)
    return {"import_s": import_s, "first_s": found.cold_s, "second_s": found.times[0],
            "compile_s": max(0.0, found.cold_s - found.times[0])}


if __name__ == "__main__":
    from bench.workloads import BY_NAME  # numpy, not fastdr

    started = time.perf_counter()
    import fastdr  # noqa: F401  (timed for "cold": importing fastdr must compile nothing)

    mode, name, *rest = sys.argv[1:]
    if mode == "memory":
        found = _memory(BY_NAME[name], rest[0], int(rest[1]), int(rest[2]))
    else:
        found = _cold(BY_NAME[name], int(rest[0]), int(rest[1]), started)
    print(json.dumps(found))
