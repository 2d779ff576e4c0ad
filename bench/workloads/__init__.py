"""The one registry of benchmarked workloads, read by the pytest-benchmark suite and the report.

One module per area. Each workload names fastdr's call, each anchor's call, the data, the
agreement metric, the size grids per profile and the BENCHMARKS.md targets. A workload whose
fastdr estimator is not importable yet reports "not available" instead of failing.
"""

from . import isomap, lle, metric_learning, neighbors, spectral
from ._base import Grid, Impl, Target, Workload

WORKLOADS = (*neighbors.WORKLOADS, *spectral.WORKLOADS, *isomap.WORKLOADS, *lle.WORKLOADS,
             *metric_learning.WORKLOADS)
BY_NAME = {workload.name: workload for workload in WORKLOADS}

__all__ = ["BY_NAME", "WORKLOADS", "Grid", "Impl", "Target", "Workload"]
