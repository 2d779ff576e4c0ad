"""Parity of ClassicalMDS with scikit-learn's for the neighbour metrics (issue 15): a metric
gives the embedding of its precomputed distances and scikit-learn's dissimilarities.
Data: tests/parity/_neighbour_data.py.
"""


import numpy as np
import pytest
import sklearn.manifold
import sklearn.metrics
from scipy.spatial import procrustes

import fastdr

from ._neighbour_data import (
    TOL,
    VI,
    X_FIT,
)

MDS_METRICS = [("euclidean", None), ("manhattan", None), ("chebyshev", None),
               ("cosine", None), ("minkowski", {"p": 3}), ("mahalanobis", {"VI": VI})]


@pytest.mark.parametrize("metric,params", MDS_METRICS)
def test_classical_mds_metric_equals_precomputed_and_sklearn(metric, params):
    X = X_FIT[:80]
    ours = fastdr.ClassicalMDS(2, metric=metric, metric_params=params).fit(X)
    D = sklearn.metrics.pairwise_distances(X, metric=metric, **(params or {}))
    pre = fastdr.ClassicalMDS(2, metric="precomputed").fit(D)
    assert procrustes(ours.embedding_, pre.embedding_)[2] < 1e-6
    np.testing.assert_allclose(ours.eigenvalues_, pre.eigenvalues_, rtol=1e-8)
    np.testing.assert_allclose(ours.dissimilarity_matrix_, D, **TOL)
    theirs = sklearn.manifold.ClassicalMDS(2, metric=metric, metric_params=params).fit(X)
    assert procrustes(ours.embedding_, theirs.embedding_)[2] < 1e-6
    np.testing.assert_allclose(ours.eigenvalues_, theirs.eigenvalues_, rtol=1e-8)
    # transform of the training points in the same metric returns their embedding
    np.testing.assert_allclose(ours.transform(X[:5]), ours.embedding_[:5], atol=1e-8)
