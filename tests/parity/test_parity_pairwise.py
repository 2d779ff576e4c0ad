"""Parity of pairwise_distances with scikit-learn's for every metric (issue 15).
Data: tests/parity/_neighbour_data.py.
"""


import numpy as np
import pytest
import sklearn.manifold
import sklearn.metrics

import fastdr

from ._neighbour_data import (
    PAIRWISE,
    TOL,
    X_FIT,
    X_NEW,
)


@pytest.mark.parametrize("metric,kwds", PAIRWISE)
def test_pairwise_distances_allclose_sklearn(metric, kwds):
    X = X_FIT[:60].copy()
    X[5] = 0.0  # a zero row: cosine distance 1 to everything, as in scikit-learn
    for Y in (None, X_NEW):
        ours = fastdr.pairwise_distances(X, Y, metric, **kwds)
        theirs = sklearn.metrics.pairwise_distances(X, Y, metric, **kwds)
        np.testing.assert_allclose(ours, theirs, **TOL)
