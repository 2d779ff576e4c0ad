"""Defaults of NN-descent: size-dependent parameters, the adaptive build width, seeds.

:func:`default_parameters` fills ``None`` parameters from the number of points and k. With
``build_neighbors=None`` a build first runs k wide; its recall is then estimated on
:func:`recall_sample` rows against their exact neighbours, and a build that misses
:data:`RECALL_GOAL` continues :func:`widened_neighbors` wide.
"""

import math
import numbers

import numpy as np

from .._config import RECALL_GOAL, RECALL_SAMPLE  # noqa: F401  (RECALL_GOAL: read from here)

GRAM_METRICS = ("euclidean", "sqeuclidean", "cosine")  # squared-Euclidean keys: GEMM leaves


def default_parameters(m, n_neighbors, metric="euclidean"):
    """The defaults used for ``None`` parameters, as a dict.

    Parameters
    ----------
    m : int
        Number of points.
    n_neighbors : int
    metric : str, default="euclidean"

    Returns
    -------
    dict
        For the metrics with squared-Euclidean keys (euclidean, sqeuclidean, cosine), whose
        leaves are joined by one GEMM each: ``n_trees = max(3, min(32, round(0.45 m^(1/4))))``
        and ``leaf_size = min(2048, max(1024, 6 n_neighbors))``. For manhattan, joined pair by
        pair: ``n_trees = max(3, min(12, round(2 log10 m)))`` and
        ``leaf_size = max(60, min(256, 5 n_neighbors))``. Both: ``n_iters =
        max(5, round(log2 m))``, ``max_candidates = min(60, max(15, n_neighbors))``. A build
        widened for recall (:func:`widened_neighbors`) samples
        ``max(max_candidates, min(60, ceil(3 build_neighbors / 4)))`` candidates.
    """
    if metric in GRAM_METRICS:
        n_trees = max(3, min(32, round(0.45 * max(m, 1) ** 0.25)))
        leaf_size = min(2048, max(1024, 6 * n_neighbors))
    else:
        n_trees = max(3, min(12, round(2 * math.log10(max(m, 2)))))
        leaf_size = max(60, min(256, 5 * n_neighbors))
    return {
        "n_trees": int(n_trees),
        "n_iters": int(max(5, round(math.log2(max(m, 2))))),
        "max_candidates": int(min(60, max(15, n_neighbors))),
        "leaf_size": int(leaf_size),
    }


def widened_neighbors(n_neighbors, m, estimate):
    """The heap width of the next build when the last one's recall estimate missed the goal.

    Neighbours of neighbours reach the true neighbours less often as the intrinsic dimension
    grows, so hard data needs wider heaps (the 50-d unit cube, m=20,000, k=15: recall 0.76
    at width 15, 0.90 at 30, 0.98 at 45). ``2 max(n_neighbors, 15)`` when the estimate is
    at least 0.85, else ``3 max(n_neighbors, 15)``; at most ``max(n_neighbors, 60)`` and
    ``m - 1``.

    Parameters
    ----------
    n_neighbors : int
    m : int
    estimate : float
        The recall estimated on the last build.

    Returns
    -------
    int
    """
    factor = 2 if estimate >= 0.85 else 3
    return int(max(n_neighbors, min(factor * max(n_neighbors, 15), max(n_neighbors, 60),
                                    m - 1)))


def recall_sample(m, seed):
    """The sorted rows (at most :data:`RECALL_SAMPLE`) whose exact neighbours check a build."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(m, size=min(m, RECALL_SAMPLE), replace=False)).astype(np.int64)


def _seed_from(random_state):
    """A uint64 seed from None, an int, a RandomState or a Generator."""
    if random_state is None or (isinstance(random_state, numbers.Integral)
                                and not isinstance(random_state, bool)):
        if random_state is not None and random_state < 0:
            raise ValueError(
                f"random_state must be a non-negative int, None, or a numpy "
                f"RandomState/Generator; got {random_state!r}."
            )
        rng = np.random.default_rng(random_state)
        return int(rng.integers(0, 2**63 - 1))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1)) * 2**31 + int(
            random_state.randint(0, 2**31 - 1))
    raise TypeError(
        f"random_state must be None, an int, or a numpy RandomState/Generator; "
        f"got {random_state!r} of type {type(random_state).__name__}."
    )
