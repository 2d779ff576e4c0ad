"""The one measuring engine of ``bench/``: untimed setup, a cold call, the agreement check of its
result, then repeats and their median (and the repeats' peak RSS on request). The
pytest-benchmark suite hands the repeats to pytest-benchmark; the report repeats here."""

import gc
import math
import statistics
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass, field


@dataclass
class Measurement:
    """What :func:`measure` found: seconds, the agreement figure and the peak RSS."""

    cold_s: float
    times: list
    agreement: object = None
    rss: dict = field(default_factory=dict)

    @property
    def median(self):
        """Median of the repeats (the cold call's time when nothing was repeated)."""
        return statistics.median(self.times) if self.times else self.cold_s

    def as_dict(self):
        return {"first_call_s": self.cold_s, "median_s": self.median, "times_s": self.times,
                "repeats": len(self.times), **self.rss}


def measure(impl, data, *, min_repeats, max_repeats, budget_s=0.0, cap_s=math.inf, check=None,
            stop_on_disagreement=False, rss=False, keep_result=False, rounds_runner=None):
    """Time ``impl`` on ``data``: ``impl.prepare(data)`` untimed, a cold call, the check, repeats.

    Parameters
    ----------
    impl : bench.workloads.Impl
    data : bench.data.Data
    min_repeats, max_repeats : int
        Timed calls after the cold one: at least ``min_repeats`` unless cold call and repeats
        reach ``cap_s`` (then one), more while they sum to less than ``budget_s``.
    budget_s, cap_s : float
    check : callable or None
        ``check(result) -> Agreement`` on the cold result; an exception is a failed agreement.
    stop_on_disagreement : bool
        Time no repeat when the check fails.
    rss : bool
        Record the repeats' peak RSS (``peak_rss_bytes``, ``rss_increase_bytes``).
    keep_result : bool
        Return the cold call's result.
    rounds_runner : callable or None
        ``rounds_runner(call, rounds) -> seconds`` runs the repeats (pytest-benchmark's
        ``pedantic``), with ``rounds`` from :func:`planned_rounds`.

    Returns
    -------
    measurement : Measurement
    result : object or None

    Notes
    -----
    The objects alive after set-up are frozen (``gc.freeze``) until the end, so the
    collection before each repeat scans only the repeats' garbage: microseconds, not a pass
    over the whole process right before the timed call. Such a pass is a CPU burst of the
    calling thread, and on the 2-core VM a numba kernel launched just after it (its workers
    woken, the caller asleep) found both workers queued on one core for about 4 ms each
    (``/proc/self/task/*/schedstat``): ``pairwise_distances`` of 1,000 x 400 took 11.7 ms
    after a 0.13 s ``gc.collect()`` (200,000 lists alive), 6.7 ms after a sleep, and 6.7 ms
    after the same collection with those lists frozen (4 microseconds). scikit-learn's BLAS
    call, where the caller takes a share of the work, was not affected.
    """
    state = impl.prepare(data) if impl.prepare is not None else None

    def call():
        return impl.run(data, state)

    gc.collect()
    gc.freeze()  # see Notes
    try:
        return _measure_frozen(impl, call, check, stop_on_disagreement, rss, keep_result,
                               rounds_runner, min_repeats, max_repeats, budget_s, cap_s)
    finally:
        gc.unfreeze()


def _measure_frozen(impl, call, check, stop_on_disagreement, rss, keep_result, rounds_runner,
                    min_repeats, max_repeats, budget_s, cap_s):
    """:func:`measure`'s cold call, check and repeats, with the setup's objects frozen."""
    settle()
    start = time.perf_counter()
    result = call()
    cold = time.perf_counter() - start
    agreement = run_check(check, result) if check is not None else None
    kept = result if keep_result else None
    del result
    settle()
    with StepPeak() if rss else nullcontext() as peak:
        if stop_on_disagreement and agreement is not None and not agreement.ok:
            times = []
        elif rounds_runner is not None:
            times = list(rounds_runner(call, planned_rounds(cold, max_repeats, cap_s)))
        else:
            times = []
            while len(times) < max_repeats and not (
                    (len(times) >= min_repeats and sum(times) >= budget_s)
                    or (times and cold + sum(times) >= cap_s)):
                gc.collect()
                start = time.perf_counter()
                call()
                times.append(time.perf_counter() - start)
    found = Measurement(cold, times, agreement)
    if rss:
        found.rss = {"peak_rss_bytes": peak.peak, "rss_increase_bytes": peak.increase,
                     "rss_method": peak.method}
    return found, kept


#: seconds to wait before timing: an OpenBLAS whose workers finished a call spins them for
#: up to 2^28 cycles (about 0.1 s) unless OPENBLAS_THREAD_TIMEOUT was set before it loaded
SETTLE_S = 0.25


def settle():
    """Wait until idle workers of the previous step (another library's BLAS or OpenMP threads,
    or the agreement check's) have gone to sleep, so that they do not share the cores with
    the calls timed next. Measured on 2 cores: fastdr's k-NN at 5,000 x 50 timed right after
    scikit-learn's took 0.096 s, and 0.044 s alone."""
    time.sleep(SETTLE_S)


def planned_rounds(cold_s, max_repeats, cap_s):
    """``max_repeats``, fewer (at least one) where ``rounds x cold_s`` would pass ``cap_s``."""
    return max(1, int(min(max_repeats, cap_s / max(cold_s, 1e-9))))


def run_check(check, result):
    """``check(result)``; an exception in it is a failed Agreement naming the error."""
    from .agreement import Agreement, error_text

    try:
        return check(result)
    except Exception as exc:  # noqa: BLE001 - a broken check is a failed agreement, not a crash
        return Agreement("agreement", float("nan"), False, error_text(exc))


def gemm_seconds(m, n, d, dtype, *, repeats=3, max_out_bytes=2**30):
    """Median time of ``np.dot`` of an (m, d) by a (d, n) matrix, after a cold call.

    Above ``max_out_bytes`` of output, row blocks of A go into one reused output block.

    Returns
    -------
    seconds : float
    blocked : bool
    """
    import numpy as np

    rng = np.random.default_rng(0)
    A = rng.standard_normal((m, d)).astype(dtype)
    B = rng.standard_normal((d, n)).astype(dtype)
    rows = max(1, min(m, max_out_bytes // (n * A.itemsize)))
    out = np.empty((rows, n), dtype=dtype)

    def product():
        for start in range(0, m, rows):
            stop = min(m, start + rows)
            np.dot(A[start:stop], B, out=out[: stop - start])

    product()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        product()
        times.append(time.perf_counter() - start)
    return statistics.median(times), rows < m


def fit_loglog_slope(sizes, seconds):
    """Least-squares slope of log(time) against log(size); None with fewer than 2 sizes."""
    import numpy as np

    pairs = [(s, t) for s, t in zip(sizes, seconds, strict=True) if t and t > 0]
    if len({s for s, _ in pairs}) < 2:
        return None
    return float(np.polyfit(np.log([s for s, _ in pairs]), np.log([t for _, t in pairs]), 1)[0])


class StepPeak:
    """Context manager: RSS ``baseline`` before and ``peak`` during the step, in bytes.

    numba's allocations escape tracemalloc, hence RSS: on Linux the high-water mark ``VmHWM``
    after resetting it, elsewhere a 5 ms sampling thread (``method="sampled"``).
    """

    def __enter__(self):
        self.baseline = _rss()
        try:
            with open("/proc/self/clear_refs", "w") as fh:
                fh.write("5")
            _hwm()
            self.method = "VmHWM"
        except OSError:
            self.method, self._samples = "sampled", [self.baseline]
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self

    def _sample(self):
        while not self._stop.is_set():
            self._samples.append(_rss())
            time.sleep(0.005)

    def __exit__(self, *exc):
        if self.method == "VmHWM":
            self.peak = _hwm()
        else:
            self._stop.set()
            self._thread.join()
            self.peak = max(self._samples + [_rss()])
        self.increase = max(0, self.peak - self.baseline)
        return False


def _rss():
    import psutil

    return psutil.Process().memory_info().rss


def _hwm():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise OSError("VmHWM not found")
