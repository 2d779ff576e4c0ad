"""Metric learning: NCA against scikit-learn, MMC_Supervised against metric-learn."""

import pytest

from bench.harness import run_workload


@pytest.mark.workload("nca")
def test_nca(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)


@pytest.mark.workload("mmc")
def test_mmc_supervised(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)
