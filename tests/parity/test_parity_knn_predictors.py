"""Parity of KNeighborsClassifier and KNeighborsRegressor with scikit-learn for every
neighbour metric (issue 15): predictions, probabilities, scores, several outputs.
Data: tests/parity/_neighbour_data.py.
"""


import numpy as np
import pytest
import sklearn.neighbors as skn

import fastdr
from fastdr.neighbors import (
    KNeighborsClassifier,
    KNeighborsRegressor,
)

from ._neighbour_data import (
    IDS,
    KWARGS,
    X_FIT,
    X_NEW,
    Y_CLASS,
    Y_REG,
    pair,
)


@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("kw", KWARGS, ids=IDS)
def test_classifier_and_regressor_equal_sklearn(kw, weights):
    clf, sk_clf = pair(KNeighborsClassifier, skn.KNeighborsClassifier, n_neighbors=7,
                        weights=weights, **kw)
    clf.fit(X_FIT, Y_CLASS)
    sk_clf.fit(X_FIT, Y_CLASS)
    np.testing.assert_array_equal(clf.predict(X_NEW), sk_clf.predict(X_NEW))
    np.testing.assert_allclose(clf.predict_proba(X_NEW), sk_clf.predict_proba(X_NEW),
                               rtol=1e-8, atol=1e-12)
    reg, sk_reg = pair(KNeighborsRegressor, skn.KNeighborsRegressor, n_neighbors=7,
                        weights=weights, **kw)
    reg.fit(X_FIT, Y_REG)
    sk_reg.fit(X_FIT, Y_REG)
    np.testing.assert_allclose(reg.predict(X_NEW), sk_reg.predict(X_NEW), rtol=1e-8)


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_multi_output_classifier_and_the_neighbour_methods_match_sklearn(weights):
    from sklearn.neighbors import KNeighborsClassifier as SkC

    rng = np.random.default_rng(11)
    X = rng.standard_normal((60, 3))
    Y = np.column_stack([(X[:, 0] > 0).astype(int), np.where(X[:, 1] > 0, "a", "b"),
                         rng.integers(0, 3, 60)])
    Q = rng.standard_normal((12, 3))
    ours = fastdr.KNeighborsClassifier(4, weights=weights).fit(X, Y)
    theirs = SkC(4, weights=weights).fit(X, Y)
    assert ours.outputs_2d_ is True and theirs.outputs_2d_ is True
    np.testing.assert_array_equal(ours.predict(Q), theirs.predict(Q))
    for got, expected in zip(ours.predict_proba(Q), theirs.predict_proba(Q), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    for got, expected in zip(ours.classes_, theirs.classes_, strict=True):
        np.testing.assert_array_equal(got, expected)
    d, i = ours.kneighbors(Q)
    sk_d, sk_i = theirs.kneighbors(Q)
    np.testing.assert_array_equal(i, sk_i)
    np.testing.assert_allclose(d, sk_d, rtol=1e-12)
    np.testing.assert_allclose(ours.kneighbors_graph(Q, mode="distance").toarray(),
                               theirs.kneighbors_graph(Q, mode="distance").toarray(),
                               rtol=1e-12)


def test_column_vector_y_warns_and_is_one_output_as_in_sklearn():
    from sklearn.exceptions import DataConversionWarning as SkDCW

    rng = np.random.default_rng(12)
    X = rng.standard_normal((30, 2))
    y = (X[:, :1] > 0).astype(int)
    with pytest.warns(SkDCW, match="A column-vector y was passed"):
        clf = fastdr.KNeighborsClassifier(3).fit(X, y)
    assert clf.outputs_2d_ is False and clf.predict(X[:4]).shape == (4,)
    i = fastdr.KNeighborsRegressor(3).fit(X, y.ravel()).kneighbors(X[:4], 2,
                                                                   return_distance=False)
    assert i.shape == (4, 2)
