"""pytest-benchmark set-up: ``--profile`` and one test per workload, (m, d) and implementation
(fastdr first at each size), with the id ``<workload>-m<m>-d<d>-<implementation>``."""

import pytest

from bench.profiles import PROFILE_ENV, PROFILE_NAMES, resolve_profile
from bench.workloads import WORKLOADS


def pytest_addoption(parser):
    parser.addoption("--profile", action="store", default=None, choices=PROFILE_NAMES,
                     help=f"fastdr benchmark sizes: smoke, quick or full (default: "
                          f"${PROFILE_ENV} or quick)")


def pytest_configure(config):
    try:
        config.fastdr_bench_profile = resolve_profile(config.getoption("--profile"))
    except ValueError as exc:  # a bad FASTDR_BENCH_PROFILE value
        raise pytest.UsageError(str(exc)) from None


def pytest_generate_tests(metafunc):
    if "impl_label" not in metafunc.fixturenames:
        return
    profile = metafunc.config.fastdr_bench_profile
    params = []
    for workload in WORKLOADS:
        grid = workload.grids[profile.name]
        cases = grid.speed_cases() + ([] if profile.name == "smoke" else grid.scaling_cases())
        for m, d in dict.fromkeys(cases):
            # availability is checked when the test runs, not here: checking the MMC anchor
            # starts the metric-learn worker, which only a selected MMC test should pay for
            params += [pytest.param(workload.name, impl.label, m, d,
                                    id=f"{workload.name}-m{m}-d{d}-{impl.label}")
                       for impl in workload.impls()]
    metafunc.parametrize(("workload_name", "impl_label", "m", "d"), params)


def pytest_report_header(config):
    return f"fastdr bench profile: {config.fastdr_bench_profile.name}"
