"""The one registry of benchmarked workloads (one module per area), read by the
pytest-benchmark suite and the report."""

from . import isomap, lle, metric_learning, neighbors, pca_solvers, spectral
from ._base import Grid, Impl, Target, Workload

WORKLOADS = (*neighbors.WORKLOADS, *spectral.WORKLOADS, *pca_solvers.WORKLOADS,
             *isomap.WORKLOADS, *lle.WORKLOADS, *metric_learning.WORKLOADS)
BY_NAME = {workload.name: workload for workload in WORKLOADS}

__all__ = ["BY_NAME", "WORKLOADS", "Grid", "Impl", "Target", "Workload"]
