"""Isomap against scikit-learn, fastdr's Dijkstra against SciPy's shortest_path, and landmark
Isomap."""

import pytest

from bench.harness import run_workload


@pytest.mark.workload("isomap")
def test_isomap(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)


@pytest.mark.workload("shortest_path")
def test_shortest_path(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)


@pytest.mark.workload("landmark_isomap")
def test_landmark_isomap(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)
