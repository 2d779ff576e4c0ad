"""Peak resident memory of one step, in process and in a fresh subprocess.

tracemalloc does not see numba's allocations, so memory is resident set size (RSS). On Linux
the peak is reset before the step by writing ``5`` to ``/proc/self/clear_refs`` and read from
``VmHWM`` after it; elsewhere a thread samples RSS every 5 ms (which can miss short peaks).

Run as a module, it measures one workload in a fresh process (what the report's memory
section uses): ``python -m bench.report.memory WORKLOAD IMPL M D``; it prints one JSON line.
"""

import json
import os
import sys
import threading
import time


def current_rss():
    """Resident set size of this process in bytes."""
    import psutil

    return psutil.Process().memory_info().rss


def _read_hwm():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise OSError("VmHWM not found")


def _reset_hwm():
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


class StepPeak:
    """Context manager: ``baseline`` RSS before the step and ``peak`` RSS during it (bytes).

    ``method`` says how the peak was measured (``"VmHWM"`` or ``"sampled"``).
    """

    def __enter__(self):
        self.baseline = current_rss()
        try:
            _reset_hwm()
            _read_hwm()
            self.method = "VmHWM"
        except OSError:
            self.method = "sampled"
            self._samples = [self.baseline]
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self

    def _sample(self):
        while not self._stop.is_set():
            self._samples.append(current_rss())
            time.sleep(0.005)

    def __exit__(self, *exc):
        if self.method == "VmHWM":
            self.peak = _read_hwm()
        else:
            self._stop.set()
            self._thread.join()
            self.peak = max(self._samples + [current_rss()])
        return False

    @property
    def increase(self):
        """Peak above the baseline, in bytes."""
        return max(0, self.peak - self.baseline)


def measure_in_subprocess(workload_name, impl_label, m, d, *, timeout=3600):
    """Peak RSS of one workload run in a fresh Python process.

    Returns
    -------
    dict
        ``baseline_bytes``, ``peak_bytes``, ``increase_bytes``, ``method``, ``seconds``, or
        ``error`` when the run failed.
    """
    import subprocess

    from .subprocess_env import bench_env

    cmd = [sys.executable, "-m", "bench.report.memory", workload_name, impl_label, str(m),
           str(d)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=bench_env(),
                              cwd=bench_env.repo_root, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"exit {proc.returncode}: {tail[0][:200]}"}
    return json.loads(lines[-1])


def _main(argv):
    import gc

    from .workloads import BY_NAME

    workload_name, impl_label, m, d = argv[0], argv[1], int(argv[2]), int(argv[3])
    workload = BY_NAME[workload_name]
    impl = next(i for i in workload.impls() if i.label == impl_label)
    # Warm up on a tiny input first: imports and JIT compilation are not part of the step.
    small = workload.data(min(m, 100), d, profile="smoke")
    impl.run(small, impl.prepare(small) if impl.prepare else None)
    data = workload.data(m, d, profile="smoke")
    state = impl.prepare(data) if impl.prepare else None
    del small
    gc.collect()
    start = time.perf_counter()
    with StepPeak() as peak:
        result = impl.run(data, state)
    seconds = time.perf_counter() - start
    del result
    print(json.dumps({"baseline_bytes": peak.baseline, "peak_bytes": peak.peak,
                      "increase_bytes": peak.increase, "method": peak.method,
                      "seconds": seconds, "pid": os.getpid()}))


if __name__ == "__main__":
    _main(sys.argv[1:])
