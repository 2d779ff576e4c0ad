"""metric-learn's other learners against metric-learn 0.7: one speed row each, at the size
the issue's targets name (the digits, or iris), with no scaling curves (the anchors take
seconds to minutes a fit; the learners' costs grow as their own docs say)."""

import numpy as np

from .. import agreement
from ._base import Grid, Impl, Target, Workload, estimator
from .metric_learning import (
    _metric_learn_available,
    _metric_learn_fit,
    _metric_learn_prepare,
)

#: MLKR's and metric-learn NCA's iteration cap: an m x m evaluation per iteration makes
#: metric-learn's fits minutes long without one (both sides run the same cap)
CAPPED_ITERATIONS = 20


def _accuracy_agreement(fast, anchor, data):
    """3-NN accuracy (5-fold) in fastdr's metric against the anchor's, with the slack of two
    standard errors (Agresti-Coull) that two solvers of one problem need on small data."""
    mine = agreement.knn_accuracy(data.X, data.y, fast.components_, n_neighbors=3)
    theirs = agreement.knn_accuracy(data.X, data.y, anchor.components_, n_neighbors=3)
    slack = agreement.accuracy_slack(theirs, data.m)
    return agreement.Agreement(
        "3-NN accuracy (5-fold)", mine, bool(mine >= theirs - slack),
        f"anchor {theirs:.4f}; ok if >= anchor - {slack:.4f} (two standard errors)")


def _accuracy_truth(fast, data):
    mine = agreement.knn_accuracy(data.X, data.y, fast.components_, n_neighbors=3)
    euclid = agreement.knn_accuracy(data.X, data.y, np.eye(data.X.shape[1]), n_neighbors=3)
    return agreement.Agreement("3-NN accuracy (5-fold)", mine, bool(mine >= euclid - 0.05),
                               f"Euclidean {euclid:.4f}; ok if not 0.05 below it")


def _mlkr_agreement(fast, anchor, data):
    mine = agreement.mlkr_loss(data.X, data.y, fast.components_)
    theirs = agreement.mlkr_loss(data.X, data.y, anchor.components_)
    return agreement.Agreement(
        "MLKR leave-one-out squared error", mine, bool(mine <= theirs * (1 + 1e-3)),
        f"anchor {theirs:.6g}; ok if not above it (the same L-BFGS-B, round-off apart)")


def _mlkr_truth(fast, data):
    mine = agreement.mlkr_loss(data.X, data.y, fast.components_)
    start = agreement.mlkr_loss(data.X, data.y, np.eye(data.X.shape[1]))
    return agreement.Agreement("MLKR leave-one-out squared error", mine, bool(mine < start),
                               f"identity {start:.6g}; ok if below it")


def _sdml_truth(fast, data):
    """SDML's M is the graphical lasso's optimum of its input matrix: the same lasso, run
    here on the input rebuilt from the learner's pairs, must give the same M."""
    from sklearn.covariance import graphical_lasso

    from fastdr.metric_learning._prior import prior_metric
    from fastdr.metric_learning._sdml import signed_scatter

    X = np.asarray(data.X, dtype=np.float64)
    index = np.concatenate([fast.must_link_, fast.cannot_link_])
    pairs = np.stack([X[index[:, 0]], X[index[:, 1]]], axis=1)
    labels = np.r_[np.ones(len(fast.must_link_)), -np.ones(len(fast.cannot_link_))]
    prior = prior_metric(fast.prior, pairs.reshape(-1, X.shape[1]), X.shape[1], None)
    S = np.linalg.inv(prior) + fast.balance_param * signed_scatter(pairs, labels)
    M = graphical_lasso(0.5 * (S + S.T), alpha=fast.sparsity_param)[1]
    gap = float(np.abs(fast.get_mahalanobis_matrix() - M).max() / np.abs(M).max())
    return agreement.Agreement("relative gap to the graphical lasso's M", gap, gap < 1e-6,
                               "ok if < 1e-6 (the same lasso on the same input)")


def _covariance_truth(fast, data):
    """The baseline's M is the pseudo-inverse of the data's covariance (whitening, which can
    be worse than Euclidean for k-NN: iris)."""
    M = np.linalg.pinv(np.cov(np.asarray(data.X, dtype=np.float64), rowvar=False))
    gap = float(np.abs(fast.get_mahalanobis_matrix() - M).max() / np.abs(M).max())
    return agreement.Agreement("relative gap to pinv(cov(X))", gap, gap < 1e-8,
                               "ok if < 1e-8")


def _sdml_unavailable():
    return (False, "skipped: metric-learn's SDML is not available: metric-learn 0.7's SDML "
                   "cannot fit without skggm on any scikit-learn it installs with (it passes "
                   "cov_init to graphical_lasso)")


def _learner(name, params, headline, speedup, *, kind="digits", anchor=True,
             agree=_accuracy_agreement, truth=_accuracy_truth, note="", key=None):
    """A headline-only workload: ``fastdr.<name>(**params).fit(X, y)`` against the same call
    of metric-learn's ``name``."""
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items())
    anchors = (Impl("metric-learn", _metric_learn_fit(name, params),
                    f"metric_learn.{name}({shown}).fit(X, y)",
                    prepare=_metric_learn_prepare,
                    available=_metric_learn_available if anchor else _sdml_unavailable),)
    m, d = headline
    return Workload(
        name=key or name.lower(),
        area="metric_learning",
        title=f"{name}({shown}), fit on the {kind} ({m} x {d})",
        data_kind="blobs10",
        fastdr=estimator("fastdr", f"fastdr.{name}", params, "fit(X, y)"),
        anchors=anchors,
        agreement=agree,
        truth_agreement=truth,
        grids={
            # iris in the smoke runs too: the Gaussian classes at 200 x 8 are too mixed for
            # the accuracy checks to mean anything (every learner near chance)
            "smoke": Grid(IRIS, headline_kind="iris"),
            "quick": Grid(headline, headline_kind=kind),
            "full": Grid(headline, headline_kind=kind),
        },
        targets=(Target(f">= {speedup:g}x faster than metric-learn", m, d, "metric-learn",
                        speedup),),
        notes=(note,) if note else (),
    )


DIGITS, IRIS = (1797, 64), (150, 4)
WORKLOADS = (
    _learner("Covariance", {}, DIGITS, 1.0, truth=_covariance_truth),
    _learner("LFDA", {"k": 7}, IRIS, 5.0, kind="iris",
             note="On the digits metric-learn's LFDA fails (ARPACK on constant pixels)."),
    # the default 100 chunklets of 2 need more rows per class than iris has
    _learner("RCA_Supervised", {"n_chunks": 30, "chunk_size": 3, "random_state": 0}, IRIS,
             5.0, kind="iris",
             note="On the digits metric-learn's RCA returns NaN (constant pixels)."),
    _learner("MLKR", {"max_iter": CAPPED_ITERATIONS, "random_state": 0}, IRIS, 5.0,
             kind="iris", agree=_mlkr_agreement, truth=_mlkr_truth),
    _learner("ITML_Supervised", {"random_state": 0}, DIGITS, 10.0),
    _learner("NCA", {"max_iter": CAPPED_ITERATIONS, "random_state": 0}, DIGITS, 5.0,
             key="nca_metric_learn"),
    _learner("SDML_Supervised", {"prior": "covariance", "balance_param": 1e-5,
                                 "random_state": 0}, IRIS, 5.0, kind="iris", anchor=False,
             truth=_sdml_truth),
    _learner("LSML_Supervised", {"random_state": 0}, DIGITS, 5.0),
    _learner("SCML_Supervised", {"random_state": 0}, DIGITS, 5.0),
)
