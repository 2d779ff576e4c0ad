"""Metric learning: NCA against scikit-learn, MMC_Supervised and LMNN against metric-learn."""

import hashlib
import importlib.util

import numpy as np

from .. import agreement, external
from ._base import Grid, Impl, Target, Workload, estimator

NCA_ITERATIONS = 50
LMNN_ITERATIONS = 200
_LMNN = {"n_neighbors": 3, "max_iter": LMNN_ITERATIONS}
_NCA = {"init": "identity", "max_iter": NCA_ITERATIONS, "random_state": 0}


def _nca_agreement(fast, anchor, data):
    mine = agreement.nca_objective(data.X, data.y, fast.components_)
    theirs = agreement.nca_objective(data.X, data.y, anchor.components_)
    iterations = f"iterations {getattr(fast, 'n_iter_', '?')} vs {getattr(anchor, 'n_iter_', '?')}"
    return agreement.Agreement(
        "NCA objective", mine, bool(mine >= theirs - 1e-3),
        f"anchor {theirs:.4f}; ok if >= anchor - 0.001 (expected share classified right); "
        + iterations)


def _nca_truth(fast, data):
    mine = agreement.nca_objective(data.X, data.y, fast.components_)
    start = agreement.nca_objective(data.X, data.y, np.eye(data.d))
    return agreement.Agreement("NCA objective", mine, bool(mine >= start),
                               f"identity start {start:.4f}; ok if not below it")


def _metric_learn_here():
    return importlib.util.find_spec("metric_learn") is not None


def _metric_learn_available():
    worker, reason = (True, "") if _metric_learn_here() else external.worker()
    return (True, "") if worker is not None else (
        False, f"skipped: metric-learn is not installed here and {reason} (metric-learn 0.7 "
        "needs scikit-learn < 1.8)")


def _metric_learn_prepare(data):
    """Load the data into the worker (untimed), unless metric-learn runs here."""
    if _metric_learn_here():
        return None
    worker, _ = external.worker()
    key = hashlib.sha1(np.ascontiguousarray(data.X).tobytes()
                       + np.ascontiguousarray(data.y).tobytes()).hexdigest()
    worker.load(key, data.X, data.y)
    return worker, key


def _metric_learn_fit(class_name, params):
    """An anchor's timed call: metric-learn's ``class_name(**params).fit(X, y)``, here or in
    the worker (see :func:`_metric_learn_prepare`)."""

    def fit(data, state):
        if state is None:
            import metric_learn

            return getattr(metric_learn, class_name)(**params).fit(data.X, data.y)
        worker, key = state
        return external.FittedMetric(worker.call("fit", (key, class_name, params)))

    return fit


def _lmnn_agreement(fast, anchor, data):
    mine = agreement.lmnn_objective(data.X, data.y, fast.components_)
    theirs = agreement.lmnn_objective(data.X, data.y, anchor.components_)
    acc_mine = agreement.knn_accuracy(data.X, data.y, fast.components_, n_neighbors=3)
    acc_theirs = agreement.knn_accuracy(data.X, data.y, anchor.components_, n_neighbors=3)
    ok = mine <= theirs * (1 + 1e-3) and acc_mine >= acc_theirs - 0.005
    return agreement.Agreement(
        "LMNN loss", mine, bool(ok),
        f"anchor {theirs:.6g}; 3-NN accuracy (5-fold) {acc_mine:.4f} vs anchor "
        f"{acc_theirs:.4f}; ok if the loss is not above the anchor's (the same algorithm: "
        f"round-off, amplified by the steps, apart: 1e-3) and accuracy >= anchor - 0.005")


def _lmnn_truth(fast, data):
    mine = agreement.lmnn_objective(data.X, data.y, fast.components_)
    start = agreement.lmnn_objective(data.X, data.y, np.eye(data.d))
    return agreement.Agreement("LMNN loss", mine, bool(mine < start),
                               f"identity start {start:.6g}; ok if below it")


def _mmc_value(model, data):
    must, cannot = agreement.mmc_constraints(data.y)
    return agreement.mmc_objective(data.X, model.get_mahalanobis_matrix(), must, cannot)


def _mmc_agreement(fast, anchor, data):
    mine, theirs = _mmc_value(fast, data), _mmc_value(anchor, data)
    acc_mine = agreement.knn_accuracy(data.X, data.y, fast.components_)
    acc_theirs = agreement.knn_accuracy(data.X, data.y, anchor.components_)
    # both solve the same problem, so on small noisy inputs the accuracies differ by a few
    # points either way: "as good" means not worse by two standard errors of the estimate
    slack = agreement.accuracy_slack(acc_theirs, data.m)
    ok = mine <= 1.05 * theirs and acc_mine >= acc_theirs - slack
    return agreement.Agreement(
        "MMC objective (scale-free)", mine, bool(ok),
        f"anchor {theirs:.4g}; 5-NN accuracy (5-fold) {acc_mine:.4f} vs anchor "
        f"{acc_theirs:.4f}; ok if objective <= 1.05 x anchor (lower is better) and accuracy "
        f">= anchor - {slack:.4f} (two standard errors)")


def _mmc_truth(fast, data):
    must, cannot = agreement.mmc_constraints(data.y)
    mine = _mmc_value(fast, data)
    euclid = agreement.mmc_objective(data.X, np.eye(data.d), must, cannot)
    return agreement.Agreement("MMC objective (scale-free)", mine, bool(mine < euclid),
                               f"Euclidean {euclid:.4g}; ok if below it (lower is better)")


WORKLOADS = (
    Workload(
        name="nca",
        area="metric_learning",
        title=f"NCA, 5 Gaussian classes, identity init, {NCA_ITERATIONS} iterations, fit",
        data_kind="blobs5",
        fastdr=estimator("fastdr", "fastdr.NeighborhoodComponentsAnalysis", _NCA, "fit(X, y)"),
        anchors=(estimator("sklearn", "sklearn.neighbors.NeighborhoodComponentsAnalysis", _NCA,
                           "fit(X, y)", max_m=10000),),
        agreement=_nca_agreement,
        truth_agreement=_nca_truth,
        grids={
            "smoke": Grid((200, 10), (100, 200), 10, (5, 10), 200),
            "quick": Grid((500, 20), (250, 500, 1000), 20, (10, 40), 500),
            "full": Grid((5000, 50), (1250, 2500, 5000, 10000), 50, (10, 25, 50, 100), 2500,
                         extra=((50000, 50),)),
        },
        targets=(Target(">= 10x faster than sklearn", 5000, 50, "sklearn", 10.0),),
        notes=("scikit-learn's NCA holds m x m arrays and is not run above m=10,000.",),
    ),
    Workload(
        name="mmc",
        area="metric_learning",
        title="MMC_Supervised (full M), constraints drawn from the labels, fit; the digits "
              "(1797 x 64) in the speed table, 10 Gaussian classes for the scaling curves",
        data_kind="blobs10",
        fastdr=estimator("fastdr", "fastdr.MMC_Supervised", {"random_state": 0}, "fit(X, y)"),
        anchors=(Impl("metric-learn", _metric_learn_fit("MMC_Supervised", {"random_state": 0}),
                      "metric_learn.MMC_Supervised(random_state=0).fit(X, y)",
                      prepare=_metric_learn_prepare,
                      available=_metric_learn_available),),
        agreement=_mmc_agreement,
        truth_agreement=_mmc_truth,
        grids={
            "smoke": Grid((200, 16), (100, 200), 16, (8, 16), 200),
            "quick": Grid((1797, 64), (250, 500, 1000), 16, (8, 16, 32), 500,
                          headline_kind="digits"),
            "full": Grid((1797, 64), (1000, 2000, 5000, 10000), 64, (16, 32, 64, 128), 2000,
                         headline_kind="digits"),
        },
        targets=(Target(">= 10x faster than metric-learn", 1797, 64, "metric-learn", 10.0),),
    ),
    Workload(
        name="lmnn",
        area="metric_learning",
        title=f"LMNN, k=3, metric-learn's optimiser for {LMNN_ITERATIONS} iterations, fit; "
              "the digits (1797 x 64) in the speed table, 10 Gaussian classes for the "
              "scaling curves",
        data_kind="blobs10",
        fastdr=estimator("fastdr", "fastdr.LMNN", _LMNN, "fit(X, y)"),
        anchors=(Impl("metric-learn", _metric_learn_fit("LMNN", _LMNN),
                      f"metric_learn.LMNN(n_neighbors=3, max_iter={LMNN_ITERATIONS}).fit(X, y)",
                      prepare=_metric_learn_prepare,
                      available=_metric_learn_available),),
        agreement=_lmnn_agreement,
        truth_agreement=_lmnn_truth,
        grids={
            "smoke": Grid((200, 16), (100, 200), 16, (8, 16), 200),
            "quick": Grid((1797, 64), (250, 500, 1000), 16, (8, 16, 32), 500,
                          headline_kind="digits"),
            "full": Grid((1797, 64), (1000, 2000, 5000, 10000), 64, (16, 32, 64, 128), 2000,
                         headline_kind="digits"),
        },
        targets=(Target(">= 20x faster than metric-learn", 1797, 64, "metric-learn", 20.0),),
        notes=("Both run the same algorithm (metric-learn's step rule), so their losses agree "
               "to round-off; the iteration cap keeps the anchor's runs to seconds.",),
    ),
)
