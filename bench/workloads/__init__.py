"""The one registry of benchmarked workloads (one module per area), read by the
pytest-benchmark suite and the report."""

from . import (
    approximate_neighbors,
    isomap,
    kernel_pca_solvers,
    lda_solvers,
    lle,
    metric_learn_learners,
    metric_learning,
    neighbors,
    neighbors_metrics,
    pca_solvers,
    sparse_neighbors,
    spectral,
)
from ._base import Grid, Impl, Target, Workload

WORKLOADS = (*neighbors.WORKLOADS, *neighbors_metrics.WORKLOADS, *sparse_neighbors.WORKLOADS,
             *spectral.WORKLOADS, *pca_solvers.WORKLOADS, *lda_solvers.WORKLOADS,
             *kernel_pca_solvers.WORKLOADS, *isomap.WORKLOADS, *lle.WORKLOADS,
             *metric_learning.WORKLOADS, *metric_learn_learners.WORKLOADS,
             *approximate_neighbors.WORKLOADS)
BY_NAME = {workload.name: workload for workload in WORKLOADS}
#: the workloads timed against metric-learn (which may need its own environment)
METRIC_LEARN_ANCHORED = {w.name for w in WORKLOADS
                         if any(a.label == "metric-learn" for a in w.anchors)}

__all__ = ["BY_NAME", "METRIC_LEARN_ANCHORED", "WORKLOADS", "Grid", "Impl", "Target", "Workload"]
