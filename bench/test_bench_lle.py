"""Locally linear embedding against scikit-learn's ARPACK solver."""

import pytest

from bench.harness import run_workload


@pytest.mark.workload("lle")
def test_lle(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)
