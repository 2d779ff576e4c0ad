"""Approximate k-NN graphs (issue 17): fastdr's NN-descent against pynndescent's.

Both build the k-NN graph of X (k=15, each point excluding itself) at the bench's thread
count. The agreement is recall against the exact neighbours of a fixed sample of rows:
fastdr's recall, with the anchor's in the detail; ok when fastdr's is at least
:data:`MIN_RECALL` and at least the anchor's less :data:`RECALL_SLACK` (on small inputs both
are near 1 and differ by a few float32 near-ties). pynndescent is optional: without it the row
runs fastdr alone (judged by its recall only).
"""

import numpy as np

from ..agreement import Agreement
from ._base import Arg, Grid, Impl, Target, Workload, estimator, module_importable

K = 15
MIN_RECALL = 0.95
RECALL_SLACK = 0.005
SAMPLE = 2000  # rows whose exact neighbours are computed for the recall
# numba.config.NUMBA_NUM_THREADS, not numba.get_num_threads(): the latter starts numba's
# threading layer, and started before fastdr's first launch it is numba's default (GNU
# OpenMP where installed), not the fork-safe layer fastdr asks for, so a later fork (the
# fork tests, when this file's tests ran first in the process) terminated the child
_THREADS = Arg("numba.config.NUMBA_NUM_THREADS",
               lambda data: __import__("numba").config.NUMBA_NUM_THREADS)


def drop_self(dist, ind, k=K):
    """The k non-self columns of a graph that lists each point among its own neighbours.

    A row that lacks itself (ties at distance 0) drops its last column instead.
    """
    ind = np.asarray(ind)
    own = ind == np.arange(ind.shape[0])[:, None]
    own[~own.any(axis=1), -1] = True
    own &= np.cumsum(own, axis=1) == 1  # only the first occurrence
    keep = ~own
    return (np.asarray(dist)[keep].reshape(ind.shape[0], -1)[:, :k],
            ind[keep].reshape(ind.shape[0], -1)[:, :k])


def _pynndescent(data, state):
    from pynndescent import NNDescent

    # pynndescent lists each point as its own first neighbour: ask for k + 1
    ind, dist = NNDescent(data.X, n_neighbors=K + 1, n_jobs=_THREADS.value(data)).neighbor_graph
    return drop_self(dist, ind)


def exact_sample(data, k=K):
    """(rows, exact neighbour indices) of a fixed sample of rows, self excluded; cached."""
    if "exact_knn_sample" not in data.extra:
        X = np.asarray(data.X, dtype=np.float64)
        rows = np.sort(np.random.default_rng(0).choice(data.m, min(SAMPLE, data.m),
                                                       replace=False))
        sq = (X * X).sum(axis=1)
        found = np.empty((rows.size, k), dtype=np.int64)
        for start in range(0, rows.size, 256):
            part = rows[start:start + 256]
            dist = sq[part, None] + sq[None, :] - 2.0 * X[part] @ X.T
            dist[np.arange(part.size), part] = np.inf
            near = np.argpartition(dist, k, axis=1)[:, :k]
            found[start:start + part.size] = near
        data.extra["exact_knn_sample"] = (rows, found)
    return data.extra["exact_knn_sample"]


def recall(result, data):
    """Mean share of the exact k nearest neighbours found, over the sampled rows."""
    rows, exact = exact_sample(data)
    ind = np.asarray(result[1])[rows]
    return float(np.mean([np.intersect1d(a, b).size for a, b in zip(ind, exact, strict=True)])
                 / exact.shape[1])


def _against_anchor(fast, anchor, data):
    ours, theirs = recall(fast, data), recall(anchor, data)
    return Agreement("recall", ours, ours >= MIN_RECALL and ours >= theirs - RECALL_SLACK,
                     f"anchor recall {theirs:.3f}; ok if >= {MIN_RECALL} and >= the "
                     f"anchor's - {RECALL_SLACK} ({min(SAMPLE, data.m)} sampled rows)")


def _alone(fast, data):
    ours = recall(fast, data)
    return Agreement("recall", ours, ours >= MIN_RECALL,
                     f"ok if >= {MIN_RECALL} ({min(SAMPLE, data.m)} sampled rows)")


WORKLOADS = (
    Workload(
        name="nndescent", area="neighbors",
        title=f"approximate k-NN graph (k={K}, self excluded), NN-descent, float32, "
              "20 separated Gaussian clusters",
        data_kind="clusters20", dtype="float32",
        fastdr=estimator("fastdr", "fastdr.NearestNeighbors",
                         {"n_neighbors": K, "algorithm": "nndescent", "n_jobs": _THREADS},
                         "fit(X).kneighbors()"),
        anchors=(Impl("pynndescent", _pynndescent,
                      f"pynndescent.NNDescent(X, n_neighbors={K + 1}, n_jobs=threads)"
                      ".neighbor_graph, self column dropped",
                      available=module_importable("pynndescent",
                                                  " (pip install pynndescent)")),),
        agreement=_against_anchor,
        truth_agreement=_alone,
        grids={
            "smoke": Grid((300, 20), (150, 300), 20, (10, 20), 300),
            "quick": Grid((20000, 50), (5000, 10000, 20000), 50, (10, 50, 100), 10000),
            "full": Grid((100000, 50), (25000, 50000, 100000, 200000), 50, (10, 50, 100),
                         50000),
        },
        targets=(Target(">= 1.5x faster than pynndescent (recall >= 0.95 and >= its)",
                        100000, 50, "pynndescent", 1.5),),
    ),
)
