"""Every workload under pytest-benchmark, timed by :func:`bench.engine.measure`: the cold call
is ``cold_s``, kept out of the rounds; an anchor that disagrees with fastdr fails."""

import numpy as np
import pytest

from bench.engine import measure
from bench.report.machine import threading_layer
from bench.workloads import BY_NAME

_LAST_FASTDR = {}  # workload name -> ((m, d), fastdr's result at that size)


def _has_nan(result):
    return any(isinstance(item, np.ndarray) and item.dtype.kind == "f" and np.isnan(item).any()
               for item in (result if isinstance(result, tuple) else (result,)))


def test_workload(benchmark, request, workload_name, impl_label, m, d):
    import numba

    workload = BY_NAME[workload_name]
    profile = request.config.fastdr_bench_profile
    data = workload.data(m, d, profile=profile.name,
                         headline=(m, d) in workload.grids[profile.name].speed_cases())
    impl = next(i for i in workload.impls() if i.label == impl_label)
    ok, reason = impl.runnable(data.m)
    if not ok:
        pytest.skip(f"{workload_name}: {reason}")
    size, reference = _LAST_FASTDR.get(workload_name, (None, None))
    check = (lambda result: workload.agreement(reference, result, data)) if (
        impl_label != "fastdr" and size == (m, d)) else None

    def rounds_runner(call, rounds):
        benchmark.group = f"{workload_name} m={data.m} d={data.d}"
        benchmark.pedantic(call, rounds=rounds, iterations=1, warmup_rounds=0)
        stats = getattr(benchmark, "stats", None)  # None under --benchmark-disable
        return list(stats.stats.data) if stats is not None else []

    rounds = profile.pytest_rounds
    found, result = measure(impl, data, min_repeats=rounds, max_repeats=rounds,
                            cap_s=profile.cap_s, check=check, stop_on_disagreement=True,
                            rss=True, keep_result=True, rounds_runner=rounds_runner)
    assert not _has_nan(result), f"{workload_name} ({impl_label}) returned NaN"
    if impl_label == "fastdr":
        _LAST_FASTDR[workload_name] = ((m, d), result)
    info = {"workload": workload_name, "impl": impl_label, "call": impl.call, "m": data.m,
            "d": data.d, "dtype": workload.dtype, "threads": numba.get_num_threads(),
            "threading_layer": threading_layer(), "cold_s": found.cold_s,
            "profile": profile.name, "rounds": len(found.times),
            "peak_rss_mib": round(found.rss["peak_rss_bytes"] / 2**20, 1),
            "rss_increase_mib": round(found.rss["rss_increase_bytes"] / 2**20, 1),
            "peak_method": found.rss["rss_method"]}
    agreement = found.agreement
    benchmark.extra_info.update(info, **({"agreement": agreement.as_dict()} if agreement else {}))
    assert agreement is None or agreement.ok, (
        f"fastdr disagrees with {impl_label} on {workload_name} (m={m}, d={d}): "
        f"{agreement.metric} = {agreement.value:g}, {agreement.detail}")
