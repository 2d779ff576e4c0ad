"""Magnitudes at the edges of floating point, and indices from trees, heaps and graphs.

Values whose squared distances overflow (or underflow) used to reach the kernels: the k-d
tree then returned its "no neighbour" marker, which numba read through (segfaults, heap
corruption). Each case here must now raise a ValueError naming the cause and the remedy,
or give a finite, correct result.
"""

import numpy as np
import pytest
import scipy.sparse

import fastdr
from fastdr._validation.indices import check_neighbor_indices
from fastdr.manifold._geodesic import geodesic_distances

from ..estimators import make_estimator


def _blobs(m=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, d)), np.repeat(np.arange(3), m // 3)


# -- values too large for squared distances (these used to read out of bounds) ------------

_TOO_LARGE = "values too large to compute distances"


def test_lle_with_one_huge_row_is_refused():
    X, _ = _blobs()
    X[7] *= 1e160
    with pytest.raises(ValueError, match=_TOO_LARGE + ".*StandardScaler"):
        fastdr.LocallyLinearEmbedding(n_neighbors=8).fit_transform(X)


def test_knn_classifier_on_huge_values_is_refused():
    X, y = _blobs()
    with pytest.raises(ValueError, match=_TOO_LARGE):
        fastdr.KNeighborsClassifier().fit(X * 1e200, y)
    est = fastdr.KNeighborsClassifier().fit(X, y)
    with pytest.raises(ValueError, match=_TOO_LARGE):
        est.predict_proba(X * 1e200)


def test_isomap_on_huge_values_is_refused():
    X, _ = _blobs()
    with pytest.raises(ValueError, match=_TOO_LARGE):
        fastdr.Isomap(n_neighbors=8).fit(X * 1e200)


def test_radius_graph_on_huge_values_is_refused():
    X, _ = _blobs()
    with pytest.raises(ValueError, match=_TOO_LARGE):
        fastdr.radius_neighbors_graph(X * 1e200, 2.5)
    with pytest.raises(ValueError, match=_TOO_LARGE):
        fastdr.radius_neighbors_graph(X * 1e200, 2.5, algorithm="brute")


def test_pairwise_distances_on_huge_values_is_refused():
    X, _ = _blobs()
    with pytest.raises(ValueError, match="^X holds " + _TOO_LARGE):
        fastdr.pairwise_distances(X * 1e200)
    with pytest.raises(ValueError, match="^Y holds " + _TOO_LARGE):
        fastdr.pairwise_distances(X, X * 1e200)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pairwise_distances_of_x_itself_on_the_gemm_route_checks_magnitudes(dtype):
    """X against itself with d >= 16 takes the magnitude from the norm trick's own norms:
    overflowing, float32-overflowing, one huge row and underflowing X are still refused, and
    ordinary X is not."""
    X = np.random.default_rng(0).standard_normal((50, 20)).astype(dtype)
    huge = {np.float64: 1e200, np.float32: 1e19}[dtype]
    with pytest.raises(ValueError, match="^X holds " + _TOO_LARGE):
        fastdr.pairwise_distances(X * dtype(huge))
    one_row = X.copy()
    one_row[7] = dtype(huge)
    with pytest.raises(ValueError, match="^X holds " + _TOO_LARGE):
        fastdr.pairwise_distances(one_row)
    tiny = {np.float64: 1e-160, np.float32: 1e-21}[dtype]
    with pytest.raises(ValueError, match="^X holds values too small"):
        fastdr.pairwise_distances(X * dtype(tiny))
    D = fastdr.pairwise_distances(X * dtype(1e-5))
    assert np.isfinite(D).all() and D.max() > 0


def test_float32_limit_is_the_float32_one():
    X, _ = _blobs()
    X32 = X.astype(np.float32)
    with pytest.raises(ValueError, match=_TOO_LARGE + ".*overflow float32"):
        fastdr.NearestNeighbors(n_neighbors=3).fit(X32 * np.float32(1e19))
    # the same values in float64 are fine
    fastdr.NearestNeighbors(n_neighbors=3).fit(X * 1e19).kneighbors()


def test_translated_data_is_not_refused():
    X, _ = _blobs()
    ind = fastdr.NearestNeighbors(n_neighbors=3).fit(X * 1e140 + 1e150).kneighbors()[1]
    assert ind.min() >= 0 and ind.max() < X.shape[0]


def test_isomap_float32_geodesic_squares_overflow_is_refused():
    X, _ = _blobs()
    with pytest.raises(ValueError, match="squares overflow float32.*dtype=np.float64"):
        fastdr.Isomap(n_neighbors=8).fit(X.astype(np.float32) * np.float32(1e18))


def test_neighbour_markers_never_reach_a_kernel():
    ind = np.array([[0, 1], [2, 5]])
    dist = np.array([[0.0, 1.0], [1.0, np.inf]])
    with pytest.raises(ValueError, match=r"1 'no neighbour' marker\(s\)"):
        check_neighbor_indices(ind, dist, 5, "The neighbour search")
    with pytest.raises(ValueError, match="outside"):
        check_neighbor_indices(np.array([[-1]]), None, 5, "The neighbour search")
    check_neighbor_indices(ind[:1], dist[:1], 5, "The neighbour search")


@pytest.mark.parametrize("name", ["NeighborhoodComponentsAnalysis", "MMC_Supervised"])
def test_metric_learners_on_huge_values_are_refused(name):
    X, y = _blobs()
    with pytest.raises(ValueError, match=_TOO_LARGE):
        make_estimator(name).fit(X * 1e200, y)


def test_mmc_at_tiny_scale_names_the_scale():
    X, y = _blobs()
    with pytest.raises(ValueError, match="MMC's eigen-decompositions failed.*StandardScaler"):
        make_estimator("MMC_Supervised").fit(X * 1e-150, y)


@pytest.mark.parametrize("X_kind", ["constant", "tiny"])
def test_nca_never_recommends_shrinkage(X_kind):
    X, y = _blobs()
    X = np.ones_like(X) if X_kind == "constant" else X * 1e-150
    est = make_estimator("NeighborhoodComponentsAnalysis").fit(X, y)
    assert np.isfinite(est.components_).all()


def test_kernel_pca_rbf_on_huge_or_tiny_values_is_refused():
    X, _ = _blobs()
    # the rbf kernel used to turn these into an identity (or all-ones) matrix, silently
    with pytest.raises(ValueError, match="^X holds " + _TOO_LARGE):
        fastdr.KernelPCA(kernel="rbf").fit(X * 1e200)
    with pytest.raises(ValueError, match="values too small to compute distances"):
        fastdr.KernelPCA(kernel="rbf").fit(X * 1e-160)
    est = fastdr.KernelPCA(kernel="rbf", n_components=2).fit(X)
    with pytest.raises(ValueError, match="^X holds " + _TOO_LARGE):
        est.transform(X * 1e200)
    # measured against the training centre: a query far out, but within range, is fine
    assert np.isfinite(est.transform(X + 1e100)).all()


def test_classical_mds_on_huge_values_is_refused():
    X, _ = _blobs()
    with pytest.raises(ValueError, match="^X holds " + _TOO_LARGE):
        fastdr.ClassicalMDS().fit(X * 1e200)
    est = fastdr.ClassicalMDS().fit(X)
    with pytest.raises(ValueError, match="^X holds " + _TOO_LARGE):
        est.transform(X * 1e200)
    with pytest.raises(ValueError, match="^X holds " + _TOO_LARGE + ".*overflow float32"):
        fastdr.ClassicalMDS().fit(X.astype(np.float32) * np.float32(1e19))


# -- the same classes of failure elsewhere ---------------------------------------------------


def test_tiny_values_whose_squares_underflow_are_refused():
    X, _ = _blobs()
    with pytest.raises(ValueError, match="values too small to compute distances.*underflow "
                                         "float32"):
        fastdr.NearestNeighbors(n_neighbors=3).fit(X.astype(np.float32) * np.float32(1e-25))
    with pytest.raises(ValueError, match="values too small to compute distances.*underflow "
                                         "float64"):
        fastdr.NearestNeighbors(n_neighbors=3).fit(X * 1e-160)
    # identical rows (no spread at all) are legitimate, and so is a query at the centre
    nn = fastdr.NearestNeighbors(n_neighbors=2).fit(X)
    nn.kneighbors(X.mean(axis=0, keepdims=True) + 1e-160)
    fastdr.NearestNeighbors(n_neighbors=2).fit(np.ones((5, 3))).kneighbors()


def test_graph_with_out_of_range_indices_is_refused():
    bad = scipy.sparse.csr_matrix((np.ones(3), np.array([1, 2, 50]), np.array([0, 1, 2, 3])),
                                  shape=(3, 3))
    with pytest.raises(ValueError, match=r"graph is not a valid sparse matrix.*column indices "
                                         r"must lie in \[0, 3\)"):
        geodesic_distances(bad)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_graph_with_nonfinite_lengths_is_refused(bad):
    graph = scipy.sparse.csr_matrix(np.array([[0, bad, 1], [0, 0, 1], [1, 0, 0.0]]))
    with pytest.raises(ValueError, match="graph has NaN or infinite edge lengths"):
        geodesic_distances(graph)


def test_regressor_targets_near_the_float64_limit_do_not_overflow():
    X, _ = _blobs()
    y = np.full(X.shape[0], 1.5e308)
    y[::2] = -1.7e308
    pred = make_estimator("KNeighborsRegressor", n_neighbors=3).fit(X, y).predict(X)
    assert np.isfinite(pred).all()
    assert np.abs(pred).max() <= 1.7e308


@pytest.mark.parametrize("name", ["KNeighborsClassifier", "KNeighborsRegressor"])
def test_subnormal_distances_and_huge_weights_give_finite_results(name):
    X = np.zeros((6, 1))
    X[:, 0] = [0.0, 5e-324, 1.0, 2.0, 3.0, 4.0]  # two points a subnormal distance apart
    y = np.array([0, 1, 0, 1, 0, 1])
    query = np.array([[1e-323]])
    for weights in ("distance", lambda d: np.full(d.shape, 1e308)):
        est = make_estimator(name, n_neighbors=3, weights=weights).fit(X, y.astype(float))
        out = est.predict_proba(query) if name == "KNeighborsClassifier" else est.predict(query)
        assert np.isfinite(out).all()


def test_huge_metric_is_named_as_the_cause():
    X, _ = _blobs()
    metric = fastdr.Mahalanobis(components=np.eye(3) * 1e200)
    with pytest.raises(ValueError, match="^X mapped by the metric holds " + _TOO_LARGE):
        fastdr.NearestNeighbors(metric=metric).fit(X)
