"""Metric learning: metric-learn's learners and interface on fastdr's kernels.

Fixed Mahalanobis metrics, the Covariance baseline, NCA (scikit-learn's and metric-learn's),
LMNN, MMC from must-link / cannot-link pairs, ITML, SDML, LSML from quadruplets, SCML from
triplets, LFDA, RCA from chunklets, and MLKR for regression. Every learner exposes
``components_`` (L, with ``M = L^T L``), ``get_mahalanobis_matrix()``, ``get_metric()``,
``pair_distance`` and ``pair_score``, and plugs into fastdr's neighbours as
``metric=learner``.
"""

from ._covariance import Covariance
from ._itml import ITML, ITML_Supervised
from ._lfda import LFDA
from ._lmnn import LMNN
from ._lsml import LSML, LSML_Supervised
from ._mahalanobis import Mahalanobis
from ._mlkr import MLKR
from ._mmc import MMC, MMC_Supervised
from ._nca import NeighborhoodComponentsAnalysis
from ._nca_metric_learn import NCA
from ._rca import RCA, RCA_Supervised
from ._scml import SCML, SCML_Supervised
from ._sdml import SDML, SDML_Supervised

__all__ = [
    "Covariance",
    "ITML",
    "ITML_Supervised",
    "LFDA",
    "LMNN",
    "LSML",
    "LSML_Supervised",
    "MLKR",
    "MMC",
    "MMC_Supervised",
    "Mahalanobis",
    "NCA",
    "NeighborhoodComponentsAnalysis",
    "RCA",
    "RCA_Supervised",
    "SCML",
    "SCML_Supervised",
    "SDML",
    "SDML_Supervised",
]
