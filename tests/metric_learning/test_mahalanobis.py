import pickle

import numpy as np
import pytest
from scipy.spatial.distance import cdist

import fastdr
from fastdr import KNeighborsClassifier, Mahalanobis, NearestNeighbors


def _psd(rng, d, rank=None):
    B = rng.standard_normal((d, rank or d))
    return B @ B.T


def test_pairwise_matches_scipy_mahalanobis(rng):
    X = rng.standard_normal((30, 4))
    Y = rng.standard_normal((20, 4))
    M = _psd(rng, 4)
    metric = Mahalanobis(M=M)
    np.testing.assert_allclose(metric.pairwise(X, Y), cdist(X, Y, "mahalanobis", VI=M),
                               rtol=1e-10)
    D = metric.pairwise(X)
    np.testing.assert_allclose(D, cdist(X, X, "mahalanobis", VI=M), rtol=1e-9, atol=1e-9)
    assert (np.diag(D) == 0).all()
    np.testing.assert_allclose(metric.get_mahalanobis_matrix(), M)
    P = metric.components_
    np.testing.assert_allclose(P.T @ P, M, atol=1e-10)
    np.testing.assert_allclose(metric.transform(X), X @ P.T)
    assert metric.n_features_in_ == 4


def test_components_define_the_metric(rng):
    P = rng.standard_normal((2, 5))
    X = rng.standard_normal((25, 5))
    metric = Mahalanobis(components=P)
    np.testing.assert_allclose(metric.transform(X), X @ P.T)
    np.testing.assert_allclose(metric.get_mahalanobis_matrix(), P.T @ P)
    np.testing.assert_allclose(metric.pairwise(X), cdist(X @ P.T, X @ P.T), atol=1e-10)


def test_weights_give_weighted_euclidean(rng):
    w = np.array([4.0, 1.0, 0.0, 0.25])
    X = rng.standard_normal((15, 4))
    Y = rng.standard_normal((9, 4))
    metric = Mahalanobis(weights=w)
    expected = np.sqrt((((X[:, None, :] - Y[None, :, :]) ** 2) * w).sum(-1))
    np.testing.assert_allclose(metric.pairwise(X, Y), expected, rtol=1e-12)
    np.testing.assert_allclose(metric.get_mahalanobis_matrix(), np.diag(w))
    assert metric.transform(X).shape == (15, 4)
    np.testing.assert_allclose(metric.pairwise([[0.0, 0, 0, 0]], [[1.0, 1, 1, 1]]),
                               [[np.sqrt(5.25)]])


def test_low_rank_matrix_reduces_dimension(rng):
    M = _psd(rng, 6, rank=2)
    X = rng.standard_normal((40, 6))
    metric = Mahalanobis(M=M)
    Z = metric.transform(X)
    assert Z.shape == (40, 2)
    np.testing.assert_allclose(cdist(Z, Z), cdist(X, X, "mahalanobis", VI=M), atol=1e-7)


def test_knn_with_metric_object_matches_scikit_learn(rng):
    from sklearn.neighbors import KNeighborsClassifier as SkKNN

    X = rng.standard_normal((120, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    Q = rng.standard_normal((30, 4))
    M = _psd(rng, 4)
    ours = KNeighborsClassifier(n_neighbors=5, metric=Mahalanobis(M=M)).fit(X, y).predict(Q)
    by_name = KNeighborsClassifier(n_neighbors=5, metric="mahalanobis",
                                   metric_params={"M": M}).fit(X, y).predict(Q)
    sk = SkKNN(n_neighbors=5, metric="mahalanobis", metric_params={"VI": M},
               algorithm="brute").fit(X, y).predict(Q)
    np.testing.assert_array_equal(ours, sk)
    np.testing.assert_array_equal(by_name, sk)
    dist, _ = NearestNeighbors(n_neighbors=3, metric=Mahalanobis(M=M)).fit(X).kneighbors(Q)
    np.testing.assert_allclose(dist, np.sort(cdist(Q, X, "mahalanobis", VI=M), 1)[:, :3],
                               rtol=1e-9)


def test_float32_stays_float32(rng):
    X = rng.standard_normal((10, 3)).astype(np.float32)
    metric = Mahalanobis(M=_psd(rng, 3))
    assert metric.transform(X).dtype == np.float32
    assert metric.pairwise(X).dtype == np.float32


def test_fit_validates_and_parameters_can_change(rng):
    X = rng.standard_normal((10, 3))
    metric = Mahalanobis(weights=[1.0, 2.0, 3.0])
    assert metric.fit(X) is metric
    assert metric.fit() is metric
    metric.set_params(weights=None, M=np.eye(3) * 4)
    np.testing.assert_allclose(metric.pairwise([[0.0, 0, 0]], [[1.0, 0, 0]]), [[2.0]])
    twin = pickle.loads(pickle.dumps(metric))
    np.testing.assert_allclose(twin.get_mahalanobis_matrix(), 4 * np.eye(3))
    assert "M=" in repr(metric)


@pytest.mark.filterwarnings("ignore::fastdr.exceptions.ConvergenceWarning")
def test_learned_metrics_share_the_interface(rng):
    X = rng.standard_normal((60, 3))
    y = (X[:, 0] > 0).astype(int)
    nca = fastdr.NeighborhoodComponentsAnalysis(max_iter=3).fit(X, y)
    fixed = Mahalanobis(components=nca.components_)
    np.testing.assert_allclose(nca.pairwise(X), fixed.pairwise(X))
    np.testing.assert_allclose(nca.get_mahalanobis_matrix(), fixed.get_mahalanobis_matrix())


# -- bad input -------------------------------------------------------------------------------

def test_non_psd_matrix_is_rejected(rng):
    M = np.diag([1.0, -2.0, 3.0])
    with pytest.raises(ValueError, match="M must be positive semidefinite; its smallest "
                                         "eigenvalue is -2"):
        Mahalanobis(M=M).pairwise(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="M must be positive semidefinite"):
        Mahalanobis(M=M).fit()
    with pytest.raises(ValueError, match="M must be positive semidefinite"):
        KNeighborsClassifier(metric=Mahalanobis(M=M)).fit(np.zeros((4, 3)), [0, 1, 0, 1])


@pytest.mark.parametrize("params,match", [
    ({}, "Mahalanobis needs exactly one of M, components or weights; got none"),
    ({"M": np.eye(2), "weights": [1.0, 1.0]}, "got M, weights"),
    ({"M": np.ones((2, 3))}, r"M must be a square matrix, got shape \(2, 3\)"),
    ({"M": np.array([[1.0, 2.0], [0.0, 1.0]])}, "Array must be symmetric: M is not"),
    ({"M": np.array([[1.0, np.nan], [np.nan, 1.0]])}, "M contains NaN or infinity"),
    ({"components": np.array([[np.inf, 1.0]])}, "components contains NaN or infinity"),
    ({"components": np.array([1.0, 2.0])}, "Expected a 2-D array for components"),
    ({"weights": [1.0, -0.5]}, "weights must be non-negative: M = diag\\(weights\\) must be "
                               "positive semidefinite"),
    ({"weights": [[1.0, 2.0]]}, "weights must be a non-empty 1-D array"),
    ({"weights": [1.0, np.nan]}, "weights contains NaN or infinity"),
])
def test_bad_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        Mahalanobis(**params).transform(np.zeros((2, 2)))


def test_feature_count_and_nonfinite_input(rng):
    metric = Mahalanobis(M=np.eye(3))
    with pytest.raises(ValueError, match="X has 2 features, but Mahalanobis is expecting 3"):
        metric.transform(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="X has 2 features, but the metric is defined on 3"):
        metric.fit(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="X has 2 features, but Mahalanobis is expecting 3"):
        metric.pairwise(np.zeros((4, 3)), np.zeros((4, 2)))
    X = rng.standard_normal((4, 3))
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        metric.transform(X)
