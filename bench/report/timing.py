"""The timing runner: one warm-up call (timed as "first call"), then the median of repeats."""

import gc
import statistics
import time
from dataclasses import dataclass


@dataclass
class Timing:
    """Times of one implementation on one input, in seconds.

    ``first_s`` is the warm-up call: it includes JIT compilation unless the numba disk cache
    served the kernels (the compile-time section measures true cold starts separately).
    """

    first_s: float
    times: list

    @property
    def median(self):
        return statistics.median(self.times) if self.times else self.first_s

    def as_dict(self):
        return {"first_call_s": self.first_s, "median_s": self.median, "times_s": self.times,
                "repeats": len(self.times)}


def time_impl(impl, data, *, min_repeats, max_repeats, budget_s, cap_s=float("inf"),
              keep_result=True):
    """Time ``impl`` on ``data``: warm-up, then repeats until enough or over budget.

    Parameters
    ----------
    impl : bench.report.workloads.Impl
    data : bench.report.data.Data
    min_repeats, max_repeats : int
        Timed calls after the warm-up; repeats stop after ``min_repeats`` once the calls add up
        to ``budget_s``.
    budget_s : float
    cap_s : float
        A slow implementation stops after one timed call once the warm-up and the timed calls
        add up to ``cap_s`` (so one slow method cannot eat a profile's time).
    keep_result : bool
        Return the warm-up call's result (for the agreement check) or drop it.

    Returns
    -------
    timing : Timing
    result : object or None
    """
    state = impl.prepare(data) if impl.prepare is not None else None
    gc.collect()
    start = time.perf_counter()
    result = impl.run(data, state)
    first = time.perf_counter() - start
    if not keep_result:
        result = None
    times = []
    while len(times) < max_repeats:
        spent = sum(times)
        if len(times) >= min_repeats and spent >= budget_s:
            break
        if times and first + spent >= cap_s:
            break
        gc.collect()
        start = time.perf_counter()
        impl.run(data, state)
        times.append(time.perf_counter() - start)
    return Timing(first, times), result


def fit_loglog_slope(sizes, seconds):
    """Least-squares slope of log(time) against log(size); None with fewer than 2 points."""
    import numpy as np

    pairs = [(s, t) for s, t in zip(sizes, seconds, strict=True) if t and t > 0]
    if len(pairs) < 2 or len({s for s, _ in pairs}) < 2:
        return None
    x = np.log([s for s, _ in pairs])
    y = np.log([t for _, t in pairs])
    return float(np.polyfit(x, y, 1)[0])
