"""PCA's scikit-learn solvers (issue 14): each against scikit-learn's same solver, same data.

``"arpack"`` and ``"randomized"`` on dense data (implicit centring, no copy of X),
``"arpack"`` on a sparse CSR X (never densified), and ``n_components="mle"`` (Minka's d',
O(d^2) here against scikit-learn's O(d^3) Python loop). IncrementalPCA (issue 36) on dense
rows, and on sparse rows that scikit-learn densifies batch by batch.
"""

import numpy as np
import scipy.sparse

from .. import agreement
from ..data import Data
from ._base import Arg, Grid, Target, Workload, estimator

K = 10
DENSITY = 0.1  # stored share of the sparse rows' entries

_WIDE_GRIDS = {
    "smoke": Grid((400, 50), (200, 400), 50, (20, 50), 400),
    "quick": Grid((5000, 500), (2000, 5000, 10000), 500, (100, 250, 500), 5000),
    "full": Grid((20000, 2000), (5000, 10000, 20000), 2000, (500, 1000, 2000), 10000),
}
_SPARSE_GRIDS = {
    "smoke": Grid((500, 50), (250, 500), 50, (20, 50), 500),
    "quick": Grid((20000, 500), (5000, 10000, 20000), 500, (100, 250, 500), 10000),
    "full": Grid((100000, 2000), (25000, 50000, 100000), 2000, (500, 1000, 2000), 50000),
}
_INCREMENTAL_GRIDS = {
    "smoke": Grid((2000, 20), (1000, 2000), 20, (10, 20), 2000),
    "quick": Grid((100000, 100), (25000, 50000, 100000), 100, (25, 50, 100), 50000),
    "full": Grid((1000000, 100), (250000, 500000, 1000000), 100, (50, 100, 200), 250000),
}
# 0.1% of each row stored; scikit-learn densifies every batch (batch x d float64), so it
# runs only up to INCREMENTAL_SPARSE_ANCHOR_MAX_M rows
SPARSE_SHARE = 0.001
INCREMENTAL_SPARSE_ANCHOR_MAX_M = 20000
_INCREMENTAL_SPARSE_GRIDS = {
    "smoke": Grid((2000, 2000), (1000, 2000), 2000, (1000, 2000), 2000),
    "quick": Grid((5000, 2000), (1250, 2500, 5000), 2000, (1000, 2000), 2500,
                  extra=((200000, 10000),)),
    "full": Grid((1000000, 10000), (100000, 300000, 1000000), 10000, (1000, 2500, 5000),
                 20000),
}
# scikit-learn's batch size for the rows, smaller where m is (at least 10 batches)
_BATCH = Arg("min(10000, m // 10)", lambda data: max(min(10000, data.m // 10), 2 * K))


def _incremental(sparse):
    params = {"n_components": K, "batch_size": _BATCH}
    anchor_options = {"max_m": INCREMENTAL_SPARSE_ANCHOR_MAX_M} if sparse else {}
    stored = f"CSR X ({SPARSE_SHARE:.1%} of each row stored)" if sparse else "dense X"
    return Workload(
        name="incremental_pca_sparse" if sparse else "incremental_pca", area="spectral",
        title=f"IncrementalPCA, {K} components, {stored}, fit_transform",
        data_kind=f"sparse{SPARSE_SHARE}" if sparse else "aniso",
        fastdr=estimator("fastdr", "fastdr.IncrementalPCA", params),
        anchors=(estimator("sklearn", "sklearn.decomposition.IncrementalPCA", params,
                           **anchor_options),),
        agreement=agreement.embedding_vs_anchor(1e-8),
        grids=_INCREMENTAL_SPARSE_GRIDS if sparse else _INCREMENTAL_GRIDS,
        targets=((Target("under 10 min (scikit-learn densifies each batch)", 1000000, 10000,
                         max_seconds=600.0),) if sparse else
                 (Target(">= 2x faster than sklearn", 1000000, 100, "sklearn", 2.0),)),
        notes=(("scikit-learn densifies each batch (batch x d float64) and runs a dense SVD "
                f"of it; it runs here up to m={INCREMENTAL_SPARSE_ANCHOR_MAX_M:,}.",)
               if sparse else ()),
    )


_MLE_GRIDS = {
    "smoke": Grid((400, 20), (200, 400), 20, (10, 20), 400),
    "quick": Grid((5000, 100), (2000, 5000, 10000), 100, (25, 50, 100), 5000),
    "full": Grid((20000, 300), (5000, 10000, 20000), 300, (100, 200, 300), 10000),
}


def _sparse_rows(data):
    """The aniso rows with about 90% of their entries zeroed, as CSR (a new Data: the dense
    one is cached and shared)."""
    keep = np.random.default_rng(1).random(data.X.shape) < DENSITY
    return Data(scipy.sparse.csr_matrix(data.X * keep))


def _solver_row(name, solver, title, grids, target_at, **options):
    params = {"n_components": K, "svd_solver": solver, "random_state": 0}
    return Workload(
        name=name, area="spectral", title=title, data_kind="aniso",
        fastdr=estimator("fastdr", "fastdr.PCA", params),
        anchors=(estimator("sklearn", "sklearn.decomposition.PCA", params),),
        agreement=agreement.embedding_vs_anchor(1e-6),
        grids=grids,
        targets=(Target("not slower than sklearn's same solver", *target_at, "sklearn", 1.0),),
        **options,
    )


WORKLOADS = (
    _solver_row("pca_arpack", "arpack",
                f"PCA, svd_solver='arpack', {K} components, dense X, fit_transform",
                _WIDE_GRIDS, (20000, 2000)),
    _solver_row("pca_randomized", "randomized",
                f"PCA, svd_solver='randomized', {K} components, dense X, fit_transform",
                _WIDE_GRIDS, (20000, 2000)),
    _solver_row("pca_sparse_arpack", "arpack",
                f"PCA, svd_solver='arpack', {K} components, CSR X ({DENSITY:.0%} stored), "
                "fit_transform", _SPARSE_GRIDS, (100000, 2000), extend=_sparse_rows),
    Workload(
        name="pca_mle", area="spectral",
        title="PCA, n_components='mle' (Minka), svd_solver='full', fit_transform",
        data_kind="aniso",
        fastdr=estimator("fastdr", "fastdr.PCA", {"n_components": "mle",
                                                   "svd_solver": "full"}),
        anchors=(estimator("sklearn", "sklearn.decomposition.PCA",
                           {"n_components": "mle", "svd_solver": "full"}),),
        agreement=agreement.embedding_vs_anchor(1e-8),
        grids=_MLE_GRIDS,
        targets=(Target("not slower than sklearn", 20000, 300, "sklearn", 1.0),),
    ),
    _incremental(sparse=False),
    _incremental(sparse=True),
)
