"""Metric learning: fixed Mahalanobis metrics, NCA, and MMC from must-link / cannot-link pairs.

Every learner exposes ``components_`` (P, with ``M = P^T P``) and
``get_mahalanobis_matrix()``, and plugs into fastdr's neighbours as ``metric=learner``.
"""

from ._mahalanobis import Mahalanobis
from ._mmc import MMC, MMC_Supervised
from ._nca import NeighborhoodComponentsAnalysis

__all__ = [
    "MMC",
    "MMC_Supervised",
    "Mahalanobis",
    "NeighborhoodComponentsAnalysis",
]
