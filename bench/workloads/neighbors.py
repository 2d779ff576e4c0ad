"""Distances and neighbours: pairwise distances, exact k-NN, the k-NN classifier, k-d tree."""

import importlib
import threading

import numpy as np

from .. import agreement
from ._base import Grid, Impl, Target, Workload, estimator, fastdr_has, module_importable


def _function(label, path, **options):
    """An :class:`Impl` timing the pairwise-distance function ``path(X)``."""
    module, name = path.rsplit(".", 1)
    return Impl(label, lambda data, state: getattr(importlib.import_module(module), name)(
        data.X), f"{path}(X)", **options)


def _knn32_faiss(data, state):
    import faiss

    index = faiss.IndexFlatL2(data.d)
    index.add(data.X)
    sq_dist, ind = index.search(data.X, 10)
    return np.sqrt(np.maximum(sq_dist, 0.0)), ind


def _with_mahalanobis(data):
    if "mahalanobis_M" not in data.extra:
        A = np.random.default_rng(1).standard_normal((data.d, data.d))
        data.extra["mahalanobis_M"] = A @ A.T / data.d + np.eye(data.d)
    return data


def _mahalanobis_fastdr(data, state):
    import fastdr

    return fastdr.Mahalanobis(M=data.extra["mahalanobis_M"]).pairwise(data.X)


def _mahalanobis_scipy(data, state):
    from scipy.spatial.distance import cdist

    return cdist(data.X, data.X, "mahalanobis", VI=data.extra["mahalanobis_M"])


def _screen_dtype(data):
    """The precision of fastdr's brute-force k-NN distance step: from ``GEMM_MIN_DIM``
    features up it is a float32 GEMM screen (exact float64 distances for the kept
    candidates) for float64 and float32 input alike."""
    from fastdr._config import GEMM_MIN_DIM

    return "float32" if data.d >= GEMM_MIN_DIM else data.X.dtype.name


def _knn(label, algorithm, chain="fit(X).kneighbors()"):
    path = ("fastdr" if label == "fastdr" else "sklearn.neighbors") + ".NearestNeighbors"
    params = {"n_neighbors": 10, "algorithm": algorithm}
    return estimator(label, path, params if label == "fastdr" else {**params, "n_jobs": -1},
                     chain)


def _fitted_one_job(data):
    from fastdr import NearestNeighbors

    return NearestNeighbors(n_neighbors=10, n_jobs=1).fit(data.X)


def _two_calls_in_turn(data, index):
    return [index.kneighbors() for _ in range(2)]


def _two_threads_at_once(data, index):
    """Two Python threads, each running the one-thread anchor's call once, side by side."""
    out = [None, None]

    def call(slot):
        out[slot] = index.kneighbors()

    threads = [threading.Thread(target=call, args=(slot,)) for slot in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return out


def _identical_answers(fast, anchor, data):
    """Share of the threads' answers bit-identical to the sequential ones (the same call)."""
    same = [all(np.array_equal(x, y) for x, y in zip(f, a, strict=True))
            for f, a in zip(fast, anchor, strict=True)]
    value = float(np.mean(same))
    return agreement.Agreement("bit-identical answers", value, value == 1.0, "ok if all")


_KNN_GRIDS = {
    "smoke": Grid((200, 20), (100, 200), 20, (8, 20), 200),
    "quick": Grid((5000, 50), (1250, 2500, 5000), 50, (16, 50, 150), 2500),
    "full": Grid((50000, 50), (12500, 25000, 50000, 100000), 50, (16, 50, 100, 300), 20000),
}
_CLASSIFIER = {"n_neighbors": 10, "weights": "distance"}

WORKLOADS = (
    Workload(
        name="pairwise", area="neighbors",
        title="pairwise Euclidean distances, X against itself, float64", data_kind="gauss",
        fastdr=_function("fastdr", "fastdr.pairwise_distances",
                         available=fastdr_has("pairwise_distances")),
        anchors=(_function("sklearn", "sklearn.metrics.pairwise_distances"),),
        agreement=agreement.dense_vs_anchor(1e-9),
        grids={
            "smoke": Grid((200, 20), (100, 200), 20, (8, 32), 200),
            "quick": Grid((2000, 100), (500, 1000, 2000), 100, (25, 100, 400), 1000),
            "full": Grid((10000, 100), (2500, 5000, 10000, 20000), 100,
                         (10, 30, 100, 300, 1000), 5000),
        },
        targets=(Target(">= 2.5x faster than sklearn", 10000, 100, "sklearn", 2.5),),
        distance_shape=lambda data: (data.m, data.m, data.d),
        distance_triangle=True,  # X against itself: each pair once
    ),
    Workload(
        name="knn_f64", area="neighbors",
        title="exact k-NN (k=10), float64, every point a query (self excluded), brute force",
        data_kind="gauss",
        fastdr=_knn("fastdr", "brute"), anchors=(_knn("sklearn", "brute"),),
        agreement=agreement.knn_vs_anchor(1e-9),
        grids=_KNN_GRIDS,
        targets=(Target(">= 1.5x faster than sklearn", 50000, 50, "sklearn", 1.5),),
        distance_shape=lambda data: (data.m, data.m, data.d),
        distance_dtype=_screen_dtype,
    ),
    Workload(
        name="knn_f64_queries", area="neighbors",
        title="exact k-NN (k=10), float64, the points passed explicitly as queries (self "
              "included), brute force",
        data_kind="gauss",
        fastdr=_knn("fastdr", "brute", "fit(X).kneighbors(X)"),
        anchors=(_knn("sklearn", "brute", "fit(X).kneighbors(X)"),),
        agreement=agreement.knn_vs_anchor(1e-9),
        grids=_KNN_GRIDS,
        targets=(Target(">= 1.5x faster than sklearn", 50000, 50, "sklearn", 1.5),),
        distance_shape=lambda data: (data.m, data.m, data.d),
        distance_dtype=_screen_dtype,
    ),
    Workload(
        name="knn_f32", area="neighbors",
        title="exact k-NN (k=10), float32, every point a query (self included), brute force",
        data_kind="gauss", dtype="float32",
        fastdr=_knn("fastdr", "brute", "fit(X).kneighbors(X)"),
        anchors=(Impl("faiss", _knn32_faiss, "faiss.IndexFlatL2(d); add(X); search(X, 10)",
                      available=module_importable("faiss", " (pip install faiss-cpu)")),
                 _knn("sklearn", "brute", "fit(X).kneighbors(X)")),
        agreement=agreement.knn_vs_anchor(1e-4),
        grids=_KNN_GRIDS,
        targets=(Target(">= 1.0x (as fast as faiss or faster)", 50000, 50, "faiss", 1.0),),
        distance_shape=lambda data: (data.m, data.m, data.d),
        distance_dtype=_screen_dtype,
    ),
    Workload(
        name="knn_classifier", area="neighbors",
        title="k-NN classifier predict (k=10, distance weights), m queries on m training "
              "points, 5 Gaussian classes",
        data_kind="blobs5",
        fastdr=estimator("fastdr", "fastdr.KNeighborsClassifier", _CLASSIFIER, "predict(Q)",
                         fit="fit(X, y)"),
        anchors=(estimator("sklearn", "sklearn.neighbors.KNeighborsClassifier",
                           {**_CLASSIFIER, "n_jobs": -1}, "predict(Q)", fit="fit(X, y)"),),
        agreement=lambda fast, anchor, data: agreement.prediction_rate(fast, anchor),
        grids={
            "smoke": Grid((200, 30), (100, 200), 30, (10, 30), 200),
            "quick": Grid((5000, 30), (1250, 2500, 5000), 30, (10, 30, 100), 2500),
            "full": Grid((50000, 30), (12500, 25000, 50000), 30, (10, 30, 100), 20000),
        },
        targets=(Target(">= 2x faster than sklearn", 50000, 30, "sklearn", 2.0),),
        distance_shape=lambda data: (data.X_query.shape[0], data.m, data.d),
        distance_dtype=_screen_dtype,
    ),
    Workload(
        name="knn_two_threads", area="neighbors",
        title="two Python threads, each kneighbors() at n_jobs=1 on one fitted index (float32, "
              "k=10, self excluded), against the same two calls in turn on one thread",
        data_kind="gauss", dtype="float32",
        fastdr=Impl("fastdr", _two_threads_at_once,
                    "NearestNeighbors(n_neighbors=10, n_jobs=1).fit(X); timed: kneighbors() "
                    "in two threads at once", prepare=_fitted_one_job,
                    available=fastdr_has("NearestNeighbors")),
        anchors=(Impl("one thread", _two_calls_in_turn,
                      "the same fitted index; timed: kneighbors() twice, one after the other",
                      prepare=_fitted_one_job, available=fastdr_has("NearestNeighbors")),),
        agreement=_identical_answers,
        grids={
            "smoke": Grid((400, 20)),
            "quick": Grid((10000, 50)),
            "full": Grid((20000, 50)),
        },
        targets=(Target(">= 1.8x the throughput of one thread", 20000, 50, "one thread", 1.8),),
        notes=("The throughput of two threads over one: on numba's TBB layer launches run side "
               "by side, on workqueue they take turns behind fastdr's launch lock "
               "(fastdr/_runtime/threads.py).",),
    ),
    Workload(
        name="knn_kdtree", area="neighbors",
        title="exact k-NN (k=10) in low dimension with a k-d tree, every point a query",
        data_kind="gauss",
        fastdr=_knn("fastdr", "kd_tree"), anchors=(_knn("sklearn", "kd_tree"),),
        agreement=agreement.knn_vs_anchor(1e-9),
        grids={
            "smoke": Grid((200, 3), (100, 200), 3, (2, 5), 200),
            "quick": Grid((20000, 3), (5000, 10000, 20000), 3, (2, 3, 5, 8), 10000),
            "full": Grid((200000, 3), (50000, 100000, 200000, 400000), 3, (2, 3, 5, 8, 12),
                         100000),
        },
    ),
    Workload(
        name="mahalanobis", area="neighbors",
        title="pairwise Mahalanobis distances with a fixed full-rank M, X against itself",
        data_kind="gauss",
        fastdr=Impl("fastdr", _mahalanobis_fastdr, "fastdr.Mahalanobis(M=M).pairwise(X)",
                    available=fastdr_has("Mahalanobis")),
        anchors=(Impl("scipy", _mahalanobis_scipy, "scipy cdist(X, X, 'mahalanobis', VI=M)"),),
        agreement=agreement.dense_vs_anchor(1e-8),
        extend=_with_mahalanobis,
        grids={
            "smoke": Grid((200, 10), (100, 200), 10, (5, 10), 200),
            "quick": Grid((2000, 20), (500, 1000, 2000), 20, (5, 20, 50), 1000),
            "full": Grid((5000, 50), (1250, 2500, 5000, 10000), 50, (10, 20, 50, 100), 2500),
        },
    ),
)
