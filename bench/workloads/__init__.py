"""The one registry of benchmarked workloads, read by the pytest-benchmark suite and the report.

One module per area. Each workload names fastdr's call, each anchor's call, the data, the
agreement metric, the size grids per profile and the BENCHMARKS.md targets. A workload whose
fastdr estimator is not importable yet reports "not available" instead of failing.
"""

from . import isomap, lle, metric_learning, neighbors, spectral
from ._base import Grid, Impl, Target, Workload

WORKLOADS = (
    *neighbors.WORKLOADS,
    *spectral.WORKLOADS,
    *isomap.WORKLOADS,
    *lle.WORKLOADS,
    *metric_learning.WORKLOADS,
)

BY_NAME = {workload.name: workload for workload in WORKLOADS}

AREAS = ("neighbors", "spectral", "isomap", "lle", "metric_learning")


def workloads_in(area):
    """Workloads of one area, in registry order."""
    return [workload for workload in WORKLOADS if workload.area == area]


__all__ = ["AREAS", "BY_NAME", "WORKLOADS", "Grid", "Impl", "Target", "Workload",
           "workloads_in"]
