"""Data and metric cases shared by the neighbour parity tests (issue 15).

Continuous random data, so no two distances tie and indices must be equal, not just
distances. Sizes stay small (m <= 300) for the interpreted coverage pass; 300 targets span
two packed blocks of the Minkowski kernels (256 each), so the partial block is exercised.
The draws from RNG run in this file's order, so every test sees the same data.
"""

import copy

import numpy as np

RNG = np.random.default_rng(15)

X_FIT = RNG.random((300, 6))

X_NEW = RNG.random((40, 6))

Y_CLASS = RNG.integers(0, 3, 300)

Y_REG = RNG.random(300)

VI = np.linalg.inv(np.cov(X_FIT.T))


def manhattan_callable(a, b):
    return float(np.abs(a - b).sum())


# (id, keyword arguments shared by fastdr and scikit-learn)
METRICS = [
    ("minkowski-p1", {"p": 1}),
    ("minkowski-p1.5", {"p": 1.5}),
    ("minkowski-p2", {"p": 2}),
    ("minkowski-p3", {"p": 3}),
    ("minkowski-pinf", {"p": np.inf}),
    ("euclidean", {"metric": "euclidean"}),
    ("l2", {"metric": "l2"}),
    ("sqeuclidean", {"metric": "sqeuclidean"}),
    ("manhattan", {"metric": "manhattan"}),
    ("cityblock", {"metric": "cityblock"}),
    ("l1", {"metric": "l1"}),
    ("chebyshev", {"metric": "chebyshev"}),
    ("infinity", {"metric": "infinity"}),
    ("cosine", {"metric": "cosine"}),
    ("mahalanobis-VI", {"metric": "mahalanobis", "metric_params": {"VI": VI}}),
    ("minkowski-w", {"metric": "minkowski", "p": 3, "metric_params": {"w": RNG.random(6)}}),
    ("callable", {"metric": manhattan_callable}),
]
IDS = [case[0] for case in METRICS]
KWARGS = [case[1] for case in METRICS]
TOL = {"rtol": 1e-10, "atol": 1e-12}


def pair(cls_f, cls_s, **kw):
    # separate copies: scikit-learn may write into metric_params
    return cls_f(**copy.deepcopy(kw)), cls_s(**copy.deepcopy(kw))


PAIRWISE = [
    ("euclidean", {}), ("l2", {}), ("sqeuclidean", {}), ("manhattan", {}), ("cityblock", {}),
    ("l1", {}), ("chebyshev", {}), ("cosine", {}), ("minkowski", {}), ("minkowski", {"p": 1}),
    ("minkowski", {"p": 1.5}), ("minkowski", {"p": 3}), ("minkowski", {"p": np.inf}),
    ("mahalanobis", {"VI": VI}), ("minkowski", {"p": 3, "w": RNG.random(6)}),
    (manhattan_callable, {}),
]
