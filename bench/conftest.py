"""pytest-benchmark set-up: the ``--profile`` option and the parametrisation over m and d.

``pytest bench --profile smoke|quick|full`` (or ``FASTDR_BENCH_PROFILE``; default ``quick``).
A benchmark function marked ``@pytest.mark.workload("name")`` runs for every implementation
of that workload (fastdr and each anchor) and every (m, d) of the profile's grid.
"""

import pytest

from bench.report.profiles import PROFILE_ENV, PROFILE_NAMES, resolve_profile
from bench.report.workloads import BY_NAME


def pytest_addoption(parser):
    parser.addoption("--profile", action="store", default=None, choices=PROFILE_NAMES,
                     help=f"fastdr benchmark sizes: smoke, quick or full (default: "
                          f"${PROFILE_ENV} or quick)")


def pytest_configure(config):
    config.addinivalue_line("markers", "workload(name): the bench.report workload to time")
    try:
        config.fastdr_bench_profile = resolve_profile(config.getoption("--profile"))
    except ValueError as exc:  # a bad FASTDR_BENCH_PROFILE value
        raise pytest.UsageError(str(exc)) from None


def _cases(workload, profile):
    grid = workload.grids[profile.name]
    cases = grid.speed_cases()
    if profile.name != "smoke":
        cases += grid.scaling_cases()
    return list(dict.fromkeys(cases))


def pytest_generate_tests(metafunc):
    marker = metafunc.definition.get_closest_marker("workload")
    if marker is None:
        return
    workload = BY_NAME[marker.args[0]]
    profile = metafunc.config.fastdr_bench_profile
    params = []
    for m, d in _cases(workload, profile):  # per size: fastdr first, then its anchors
        for impl in workload.impls():
            ok, reason = impl.runnable(m)
            marks = () if ok else (pytest.mark.skip(reason=f"{workload.name}: {reason}"),)
            params.append(pytest.param(impl.label, m, d, id=f"m{m}-d{d}-{impl.label}",
                                       marks=marks))
    metafunc.parametrize(("impl_label", "m", "d"), params)


def pytest_report_header(config):
    return f"fastdr bench profile: {config.fastdr_bench_profile.name}"
