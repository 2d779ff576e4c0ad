"""Runs one workload case under pytest-benchmark: cold call, agreement check, timed rounds.

The first call is timed separately as ``cold_s`` (it includes JIT compilation unless the numba
disk cache serves the kernels) and is excluded from the benchmark's rounds. An anchor's result
is compared with fastdr's on the same input (fastdr runs first for each size); a disagreement
fails the benchmark, so a fast wrong answer cannot pass.
"""

import time

import numpy as np

from bench.report.machine import threading_layer
from bench.report.memory import StepPeak
from bench.report.workloads import BY_NAME

_LAST_FASTDR = {}  # workload name -> ((m, d), fastdr's result on that size)


def _assert_no_nan(result, what):
    items = result if isinstance(result, tuple) else (result,)
    for item in items:
        if isinstance(item, np.ndarray) and item.dtype.kind == "f":
            assert not np.isnan(item).any(), f"{what} returned NaN"


def run_workload(benchmark, request, impl_label, m, d):
    """Benchmark one implementation of the marked workload at size (m, d)."""
    import numba

    workload = BY_NAME[request.node.get_closest_marker("workload").args[0]]
    profile = request.config.fastdr_bench_profile
    grid = workload.grids[profile.name]
    data = workload.data(m, d, profile=profile.name, headline=(m, d) in grid.speed_cases())
    impl = next(i for i in workload.impls() if i.label == impl_label)
    state = impl.prepare(data) if impl.prepare is not None else None

    start = time.perf_counter()
    result = impl.run(data, state)
    cold = time.perf_counter() - start
    _assert_no_nan(result, f"{workload.name} ({impl_label})")
    info = {"workload": workload.name, "impl": impl_label, "call": impl.call, "m": data.m,
            "d": data.d, "dtype": workload.dtype, "threads": numba.get_num_threads(),
            "threading_layer": threading_layer(), "cold_s": cold, "profile": profile.name}
    if impl_label == "fastdr":
        _LAST_FASTDR[workload.name] = ((m, d), result)
    else:
        size, fast_result = _LAST_FASTDR.get(workload.name, (None, None))
        if size == (m, d):
            agreement = workload.agreement(fast_result, result, data)
            info["agreement"] = agreement.as_dict()
            assert agreement.ok, (f"fastdr disagrees with {impl_label} on {workload.name} "
                                  f"(m={m}, d={d}): {agreement.metric} = {agreement.value:g}, "
                                  f"{agreement.detail}")
    del result

    benchmark.group = f"{workload.name} m={data.m} d={data.d}"
    affordable = profile.cap_s / max(cold, 1e-9)  # inf in the full profile
    rounds = max(1, int(min(profile.pytest_rounds, affordable)))
    info["rounds"] = rounds
    with StepPeak() as peak:
        benchmark.pedantic(impl.run, args=(data, state), rounds=rounds, iterations=1,
                           warmup_rounds=0)
    info.update(peak_rss_mib=round(peak.peak / 2**20, 1),
                rss_increase_mib=round(peak.increase / 2**20, 1), peak_method=peak.method)
    benchmark.extra_info.update(info)
