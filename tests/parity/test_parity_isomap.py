"""fastdr.Isomap against scikit-learn 1.9's Isomap on the same data: the same parameters and
defaults, embeddings equal up to rotation (Procrustes disparity below 1e-6), the same geodesic
distances, reconstruction error and out-of-sample placement, the same warnings and errors."""

import inspect
import re
import warnings

import numpy as np
import pytest
import scipy.sparse
from sklearn.datasets import make_swiss_roll
from sklearn.manifold import Isomap as SkIsomap
from sklearn.neighbors import KNeighborsTransformer
from sklearn.neighbors import kneighbors_graph as sk_kneighbors_graph

from fastdr import Isomap

from .. import reference

DISCONNECTED_PHRASE = "The number of connected components of the neighbors graph is 2 > 1"


@pytest.fixture(scope="module")
def X():
    return make_swiss_roll(150, noise=0.05, random_state=0)[0]


@pytest.fixture(scope="module")
def queries(X):
    return X[:12] + np.random.default_rng(1).normal(0, 0.1, (12, 3))


def assert_same_isomap(ours, theirs, new=None, new_theirs=None):
    """Embedding, geodesics, reconstruction error and placement of new points all agree."""
    assert reference.procrustes_disparity(ours.embedding_, theirs.embedding_) < 1e-6
    np.testing.assert_allclose(ours.dist_matrix_, theirs.dist_matrix_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(ours.reconstruction_error(), theirs.reconstruction_error(),
                               rtol=1e-6)
    assert ours.n_features_in_ == theirs.n_features_in_
    if new is not None:
        new_theirs = new if new_theirs is None else new_theirs
        joint = np.vstack([ours.embedding_, ours.transform(new)])
        joint_theirs = np.vstack([theirs.embedding_, theirs.transform(new_theirs)])
        assert reference.procrustes_disparity(joint, joint_theirs) < 1e-6


def test_signature_has_every_sklearn_parameter_with_its_default():
    ours = inspect.signature(Isomap).parameters
    theirs = inspect.signature(SkIsomap).parameters
    for name, param in theirs.items():
        assert name in ours, name
        assert ours[name].default == param.default, name
        assert ours[name].kind == inspect.Parameter.KEYWORD_ONLY
    extras = set(ours) - set(theirs)
    assert extras and all(ours[n].kind == inspect.Parameter.KEYWORD_ONLY for n in extras)


def test_defaults_match(X, queries):
    ours, theirs = Isomap().fit(X), SkIsomap().fit(X)
    assert_same_isomap(ours, theirs, queries)
    np.testing.assert_array_equal(ours.get_feature_names_out(),
                                  theirs.get_feature_names_out())


METRICS = [
    ("euclidean", {}),
    ("minkowski", {"p": 1}),
    ("minkowski", {"p": 3}),
    ("minkowski", {"p": np.inf}),
    ("manhattan", {}),
    ("cityblock", {}),
    ("l1", {}),
    ("chebyshev", {}),
    ("infinity", {}),
    ("sqeuclidean", {}),
    ("cosine", {}),
]


# scikit-learn 1.9's Isomap refuses p=inf and the name "infinity" (its parameter table);
# fastdr takes them, as its neighbour estimators do, and they mean chebyshev
SKLEARN_SPELLING = {("minkowski", "inf"): ("chebyshev", {}), ("infinity", ""): ("chebyshev", {})}


@pytest.mark.parametrize("metric,extra", METRICS, ids=[f"{m}{e}" for m, e in METRICS])
def test_each_metric(X, queries, metric, extra):
    ours = Isomap(n_neighbors=6, metric=metric, **extra).fit(X)
    key = (metric, "inf" if extra.get("p") == np.inf else "")
    sk_metric, sk_extra = SKLEARN_SPELLING.get(key, (metric, extra))
    theirs = SkIsomap(n_neighbors=6, metric=sk_metric, **sk_extra).fit(X)
    assert_same_isomap(ours, theirs, queries)


def test_sklearn_still_refuses_what_fastdr_spells_as_chebyshev(X):
    from sklearn.utils._param_validation import InvalidParameterError

    for kwargs in ({"p": np.inf}, {"metric": "infinity"}):
        with pytest.raises(InvalidParameterError):
            SkIsomap(n_neighbors=6, **kwargs).fit(X)


def test_mahalanobis_metric_params(X, queries):
    A = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.1], [0.0, 0.1, 0.5]])
    params = {"VI": A}
    ours = Isomap(n_neighbors=6, metric="mahalanobis", metric_params=params).fit(X)
    theirs = SkIsomap(n_neighbors=6, metric="mahalanobis", metric_params=params).fit(X)
    assert_same_isomap(ours, theirs, queries)


def test_callable_metric(X, queries):
    def manhattan(a, b):
        return float(np.abs(a - b).sum())

    ours = Isomap(n_neighbors=6, metric=manhattan).fit(X)
    theirs = SkIsomap(n_neighbors=6, metric=manhattan).fit(X)
    assert_same_isomap(ours, theirs, queries)


@pytest.mark.parametrize("path_method", ["FW", "D"])
def test_path_methods(X, queries, path_method):
    ours = Isomap(n_neighbors=7, path_method=path_method).fit(X)
    theirs = SkIsomap(n_neighbors=7, path_method=path_method).fit(X)
    assert_same_isomap(ours, theirs, queries)
    alias = {"FW": "floyd", "D": "dijkstra"}[path_method]
    np.testing.assert_array_equal(
        Isomap(n_neighbors=7, path_method=alias).fit(X).dist_matrix_, ours.dist_matrix_)


@pytest.mark.parametrize("radius", [np.inf, 6.0])
def test_radius_graphs(X, queries, radius):
    ours = Isomap(n_neighbors=None, radius=radius).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # radius=6 leaves a point alone
        theirs = SkIsomap(n_neighbors=None, radius=radius).fit(X)
    assert_same_isomap(ours, theirs, queries)
    if radius == np.inf:  # the complete graph: geodesics are the straight distances
        from sklearn.metrics import pairwise_distances

        np.testing.assert_allclose(ours.dist_matrix_, pairwise_distances(X), atol=1e-8)


def test_sparse_input(X, queries):
    rng = np.random.default_rng(2)
    dense = np.hstack([X, np.zeros((X.shape[0], 3))])
    dense[rng.uniform(size=dense.shape) < 0.3] = 0.0
    Xs = scipy.sparse.csr_matrix(dense)
    Q = scipy.sparse.csr_matrix(np.hstack([queries, np.zeros((12, 3))]))
    ours = Isomap(n_neighbors=6).fit(Xs)
    theirs = SkIsomap(n_neighbors=6).fit(Xs)
    assert_same_isomap(ours, theirs, Q)
    dense_fit = Isomap(n_neighbors=6).fit(dense)
    assert reference.procrustes_disparity(ours.embedding_, dense_fit.embedding_) < 1e-10


def test_precomputed_dense_matrix(X, queries):
    from sklearn.metrics import pairwise_distances

    D = pairwise_distances(X)
    D_new = pairwise_distances(queries, X)
    ours = Isomap(n_neighbors=6, metric="precomputed").fit(D)
    theirs = SkIsomap(n_neighbors=6, metric="precomputed").fit(D)
    assert_same_isomap(ours, theirs, D_new)
    assert ours.n_features_in_ == 150
    from_features = Isomap(n_neighbors=6).fit(X)
    np.testing.assert_allclose(ours.dist_matrix_, from_features.dist_matrix_, atol=1e-9)
    with pytest.raises(ValueError, match=r"Precomputed matrix must be square"):
        Isomap(metric="precomputed").fit(D[:, :100])
    with pytest.raises(ValueError, match=r"has 100 columns, but Isomap was fitted on 150"):
        ours.transform(D_new[:, :100])


def test_precomputed_sparse_graph(X, queries):
    # KNeighborsTransformer's graph stores each point itself (a zero) and its 6 neighbours
    graph = KNeighborsTransformer(n_neighbors=6, mode="distance").fit_transform(X)
    G_new = KNeighborsTransformer(n_neighbors=6, mode="distance").fit(X).transform(queries)
    ours = Isomap(n_neighbors=6, metric="precomputed").fit(graph)
    theirs = SkIsomap(n_neighbors=6, metric="precomputed").fit(graph)
    assert_same_isomap(ours, theirs, G_new)
    # without the diagonal, scikit-learn drops each row's nearest stored entry
    bare = sk_kneighbors_graph(X, 7, mode="distance")
    ours = Isomap(n_neighbors=6, metric="precomputed").fit(bare)
    theirs = SkIsomap(n_neighbors=6, metric="precomputed").fit(bare)
    assert_same_isomap(ours, theirs)
    with pytest.raises(ValueError, match="8 neighbors per samples are required, but some "
                                         "samples have only 7 neighbors"):
        Isomap(n_neighbors=7, metric="precomputed").fit(bare)


def two_rolls(X):
    return np.vstack([X, X + np.array([100.0, 0.0, 0.0])])


def test_disconnected_default_warns_then_embeds_like_sklearn(X):
    both = two_rolls(X)
    with pytest.warns(UserWarning, match=re.escape(DISCONNECTED_PHRASE)) as record:
        ours = Isomap(n_neighbors=6).fit(both)
    message = str(next(w.message for w in record if DISCONNECTED_PHRASE in str(w.message)))
    assert "sizes 150, 150" in message
    i, j = ours.connecting_edges_[0]
    assert f"({i}, {j}) of length" in message
    with pytest.warns(UserWarning, match=re.escape(DISCONNECTED_PHRASE)):
        theirs = SkIsomap(n_neighbors=6).fit(both)
    assert_same_isomap(ours, theirs, both[:5] + 0.05)
    np.testing.assert_allclose(ours.dist_matrix_[i, j], np.linalg.norm(both[i] - both[j]))
    # the same on the precomputed dense matrix, where the edge is read from the matrix
    from sklearn.metrics import pairwise_distances

    D = pairwise_distances(both)
    with pytest.warns(UserWarning, match=re.escape(DISCONNECTED_PHRASE)):
        pre = Isomap(n_neighbors=6, metric="precomputed").fit(D)
    assert reference.procrustes_disparity(pre.embedding_, theirs.embedding_) < 1e-6


def test_disconnected_sparse_precomputed_graph_is_a_runtime_error(X):
    graph = KNeighborsTransformer(n_neighbors=6, mode="distance").fit_transform(two_rolls(X))
    with pytest.raises(RuntimeError, match=re.escape(DISCONNECTED_PHRASE)):
        SkIsomap(n_neighbors=6, metric="precomputed").fit(graph)
    with pytest.raises(RuntimeError, match=re.escape(DISCONNECTED_PHRASE) +
                       r".*The graph cannot be completed with metric='precomputed'"):
        Isomap(n_neighbors=6, metric="precomputed").fit(graph)
    with pytest.warns(UserWarning, match="embeds only the largest one"):
        largest = Isomap(n_neighbors=6, metric="precomputed",
                         on_disconnected="largest").fit(graph)
    assert largest.embedding_.shape == (150, 2)


@pytest.mark.parametrize("kwargs", [{"eigen_solver": "arpack"},
                                    {"eigen_solver": "arpack", "tol": 1e-12,
                                     "max_iter": 5000},
                                    {"eigen_solver": "dense", "n_components": 3}])
def test_eigen_solvers(X, queries, kwargs):
    ours = Isomap(n_neighbors=6, **kwargs).fit(X)
    theirs = SkIsomap(n_neighbors=6, **kwargs).fit(X)
    assert_same_isomap(ours, theirs, queries)


def test_kernel_pca_attribute_behaves_as_sklearn(X, queries):
    ours = Isomap(n_neighbors=6).fit(X)
    theirs = SkIsomap(n_neighbors=6).fit(X)
    kernel = -0.5 * ours.dist_matrix_ ** 2
    np.testing.assert_allclose(np.abs(ours.kernel_pca_.transform(kernel)),
                               np.abs(ours.embedding_), atol=1e-8)
    np.testing.assert_allclose(np.abs(ours.kernel_pca_.eigenvalues_),
                               theirs.kernel_pca_.eigenvalues_, rtol=1e-8)
    assert ours.kernel_pca_.eigenvectors_.shape == theirs.kernel_pca_.eigenvectors_.shape
    np.testing.assert_allclose(ours.kernel_pca_.transform(kernel[:7]) ** 2,
                               theirs.kernel_pca_.transform(kernel[:7]) ** 2, atol=1e-8)
    assert type(ours.nbrs_).__name__ == "NearestNeighbors"


def test_float32_and_feature_names(X):
    import pandas as pd

    X32 = X.astype(np.float32)
    ours, theirs = Isomap(n_neighbors=6).fit(X32), SkIsomap(n_neighbors=6).fit(X32)
    assert ours.dist_matrix_.dtype == theirs.dist_matrix_.dtype == np.float32
    assert reference.procrustes_disparity(ours.embedding_, theirs.embedding_) < 1e-6
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    ours, theirs = Isomap(n_neighbors=6).fit(frame), SkIsomap(n_neighbors=6).fit(frame)
    np.testing.assert_array_equal(ours.feature_names_in_, theirs.feature_names_in_)
    np.testing.assert_array_equal(ours.get_feature_names_out(),
                                  theirs.get_feature_names_out())


def test_both_n_neighbors_and_radius_is_sklearns_error(X):
    for estimator in (Isomap, SkIsomap):
        with pytest.raises(ValueError, match="Both n_neighbors and radius are provided"):
            estimator(radius=2.0).fit(X)


def test_precomputed_radius_graphs(X, queries):
    from sklearn.metrics import pairwise_distances
    from sklearn.neighbors import radius_neighbors_graph as sk_radius_graph

    D = pairwise_distances(X)
    D_new = pairwise_distances(queries, X)
    for radius in (6.0, np.inf):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # radius=6 leaves a point alone
            ours = Isomap(n_neighbors=None, radius=radius, metric="precomputed").fit(D)
            theirs = SkIsomap(n_neighbors=None, radius=radius, metric="precomputed").fit(D)
        assert_same_isomap(ours, theirs, D_new)
    graph = sk_radius_graph(X, 8.0, mode="distance")
    ours = Isomap(n_neighbors=None, radius=7.0, metric="precomputed").fit(graph)
    theirs = SkIsomap(n_neighbors=None, radius=7.0, metric="precomputed").fit(graph)
    assert_same_isomap(ours, theirs)
