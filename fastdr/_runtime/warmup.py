"""``fastdr.warmup()``: compile (or load from numba's disk cache) the common kernels now.

Kernels compile on first use, which makes the first fit of a process slow (seconds to a
minute without a warm disk cache). A service can call :func:`warmup` at start-up and pay
that cost before its first request.
"""

import logging
import time
import warnings

import numpy as np

_LOG = logging.getLogger("fastdr")


def _rows(m, d, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal((m, d)).astype(dtype)


def _knn(dtype):
    from ..neighbors import NearestNeighbors

    for d in (4, 20):  # direct sums below GEMM_MIN_DIM features, the norm trick above
        X = _rows(40, d, dtype)
        nn = NearestNeighbors(n_neighbors=3, algorithm="brute").fit(X)
        nn.kneighbors()
        nn.kneighbors(X[:5])
        nn.radius_neighbors(X[:5], radius=1.0)
    # binary rows tie everywhere: float64 rows the float32 screen cannot certify are redone
    # by the float64 GEMM search, which this compiles too
    X = np.random.default_rng(0).integers(0, 2, (60, 20)).astype(dtype)
    NearestNeighbors(n_neighbors=3, algorithm="brute").fit(X).kneighbors()


def _nndescent():
    from ..neighbors._nndescent import nndescent_graph, nndescent_query

    # the squared-Euclidean route that NearestNeighbors(algorithm="nndescent") takes
    for dtype in (np.float64, np.float32):
        X = _rows(80, 4, dtype)
        *_, index = nndescent_graph(X, 3, metric="sqeuclidean", random_state=0,
                                    return_index=True)
        nndescent_query(index, X[:5], 3)
        # leaf mates alone (tiny leaves, no rounds) miss the recall goal: the widening step
        nndescent_graph(X, 3, metric="sqeuclidean", n_trees=1, leaf_size=4, n_iters=0,
                        random_state=0)


def _pairwise():
    from .._kernels.distances import euclidean as dist_kernels
    from .._kernels.knn import screen as knn_screen
    from ..pairwise import pairwise_distances
    from .threads import parallel_section

    for dtype in (np.float64, np.float32):
        # small inputs take the set-up kernels' serial twins: compile the parallel ones too
        X = _rows(30, 20, dtype)
        centre = X.mean(axis=0).astype(dtype)
        with parallel_section(None):
            norms = dist_kernels.centred_sqnorms(X, centre)
            dist_kernels.centre_rows(X, centre)
            dist_kernels.pack_queries(X, centre)
            dist_kernels.pack_targets(X, centre, norms.astype(dtype), 16)
            centre64 = centre.astype(np.float64)
            knn_screen.pack_screen_queries(X, centre64, 1.0)
            knn_screen.pack_screen_targets(X, centre64, 1.0, norms, 1e-6, 16)

    for dtype in (np.float64, np.float32):
        for d in (4, 20):
            X = _rows(30, d, dtype)
            pairwise_distances(X)
            pairwise_distances(X[:5], X)


def _dijkstra():
    from ..manifold import Isomap

    for dtype in (np.float64, np.float32):
        Isomap(n_neighbors=5, n_components=2).fit(_rows(60, 3, dtype))


def _lle():
    from ..manifold import LocallyLinearEmbedding

    for dtype in (np.float64, np.float32):
        X = _rows(60, 3, dtype)
        LocallyLinearEmbedding(n_neighbors=6, n_components=2).fit(X).transform(X[:5])


def _kernel_matrix():
    from ..decomposition import KernelPCA

    for dtype in (np.float64, np.float32):
        for d in (4, 20):
            X = _rows(40, d, dtype)
            KernelPCA(n_components=2, kernel="rbf").fit(X).transform(X[:5])


def _nca():
    from ..metric_learning import NeighborhoodComponentsAnalysis

    y = np.repeat(np.arange(3), 20)
    for dtype in (np.float64, np.float32):
        NeighborhoodComponentsAnalysis(n_components=2, max_iter=3, random_state=0).fit(
            _rows(60, 6, dtype), y)


_STEPS = (
    ("knn_float64", lambda: _knn(np.float64)),
    ("knn_float32", lambda: _knn(np.float32)),
    ("nndescent", _nndescent),
    ("pairwise", _pairwise),
    ("dijkstra", _dijkstra),
    ("lle", _lle),
    ("kernel_matrix", _kernel_matrix),
    ("nca", _nca),
)


def warmup(verbose=False):
    """Compile the common kernels now, on tiny inputs, and report the time it took.

    Covers float64 and float32 k-NN (brute force: direct and norm-trick routes, radius
    queries, the self-query kernel), NN-descent graphs and queries, pairwise distances,
    Isomap's graph and Dijkstra, LLE weights, the KernelPCA rbf kernel matrix and NCA's
    objective. Kernels are cached on disk
    by numba, so a later process (or a second call) mostly loads them instead.

    Parameters
    ----------
    verbose : bool, default=False
        Print one line per step and the total.

    Returns
    -------
    dict of str to float
        Seconds spent per step, in the order they ran (``"knn_float64"``,
        ``"knn_float32"``, ``"nndescent"``, ``"pairwise"``, ``"dijkstra"``, ``"lle"``,
        ``"kernel_matrix"``, ``"nca"``). The total is also logged at INFO level on the
        ``"fastdr"`` logger.
    """
    report = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny inputs: convergence and similar warnings
        for name, step in _STEPS:
            start = time.perf_counter()
            step()
            report[name] = time.perf_counter() - start
            if verbose:
                print(f"fastdr.warmup: {name:<14s} {report[name]:8.2f} s")
    total = sum(report.values())
    if verbose:
        print(f"fastdr.warmup: {'total':<14s} {total:8.2f} s")
    _LOG.info("fastdr.warmup compiled the common kernels in %.2f s", total)
    return report
