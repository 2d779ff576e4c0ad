"""LDA's scikit-learn solvers other than eigen: "svd" (the default) and "lsqr", each against
scikit-learn's same solver at the linear grid sizes (up to 100,000 x 200)."""

from ._base import Target, Workload, estimator
from .spectral import _LINEAR_GRIDS, _lda_agreement

_SKLEARN_LDA = "sklearn.discriminant_analysis.LinearDiscriminantAnalysis"


def _solver_row(solver, title):
    return Workload(
        name=f"lda_{solver}", area="spectral", title=title, data_kind="blobs10",
        fastdr=estimator("fastdr", "fastdr.LinearDiscriminantAnalysis", {"solver": solver},
                         "fit(X, y)"),
        anchors=(estimator("sklearn", _SKLEARN_LDA, {"solver": solver}, "fit(X, y)"),),
        agreement=_lda_agreement,
        grids=_LINEAR_GRIDS,
        # a new solver must not lose to scikit-learn's same solver
        targets=(Target("not slower than sklearn", 100000, 200, "sklearn", 1.0),),
    )


WORKLOADS = (
    _solver_row("svd", "LDA (svd solver, the default), 10 Gaussian classes, fit; agreement "
                       "from predict"),
    _solver_row("lsqr", "LDA (lsqr solver), 10 Gaussian classes, fit; agreement from "
                        "predict"),
)
