import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastdr
from fastdr import (
    KNeighborsClassifier,
    KNeighborsRegressor,
    NearestNeighbors,
    kneighbors_graph,
    radius_neighbors_graph,
)

from .. import reference

DIMS = [2, 3, 20, 100]
DTYPES = [(np.float64, 1e-10), (np.float32, 1e-5)]



def _invalid(param, allowed, got, est='NearestNeighbors'):
    """fastdr's parameter-validation message, word for word, as a regex."""
    return re.escape(f"The {param!r} parameter of {est} must be {allowed}. Got {got} "
                     "instead.")


def _data(rng, m, d, dtype):
    return rng.standard_normal((m, d)).astype(dtype)


@pytest.mark.parametrize("algorithm", ["brute", "kd_tree"])
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("dtype,rtol", DTYPES)
def test_kneighbors_matches_reference_and_sklearn(rng, algorithm, d, dtype, rtol):
    from sklearn.neighbors import NearestNeighbors as SkNN

    X = _data(rng, 300, d, dtype)
    Q = _data(rng, 50, d, dtype)
    nn = NearestNeighbors(n_neighbors=6, algorithm=algorithm).fit(X)
    sk = SkNN(n_neighbors=6, algorithm="brute").fit(X)
    for query, exclude in ((None, True), (Q, False)):
        dist, ind = nn.kneighbors(query)
        assert dist.dtype == dtype and ind.dtype == np.int64
        ref_d, ref_i = reference.knn(X, X if query is None else Q, 6, exclude_self=exclude)
        np.testing.assert_array_equal(ind, ref_i)
        np.testing.assert_allclose(dist, ref_d, rtol=rtol, atol=rtol)
        sk_d, sk_i = sk.kneighbors(query)
        np.testing.assert_array_equal(ind, sk_i)
        np.testing.assert_allclose(dist, sk_d, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("algorithm", ["brute", "kd_tree"])
def test_duplicates_count_as_neighbours_and_ties_go_to_smaller_index(algorithm):
    X = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [5.0, 5.0]])
    dist, ind = NearestNeighbors(n_neighbors=3, algorithm=algorithm).fit(X).kneighbors()
    assert ind[0].tolist() == [1, 2, 3] and dist[0].tolist() == [0.0, 1.0, 1.0]
    assert ind[1].tolist() == [0, 2, 3]


def test_many_duplicates_exclude_self_by_index():
    X = np.zeros((6, 3))
    for algorithm in ("brute", "kd_tree"):
        _, ind = NearestNeighbors(n_neighbors=5, algorithm=algorithm).fit(X).kneighbors()
        for i in range(6):
            assert i not in ind[i]
            assert sorted(ind[i]) == [j for j in range(6) if j != i]


@pytest.mark.parametrize("algorithm", ["brute", "kd_tree"])
@pytest.mark.parametrize("d", [2, 20])
def test_radius_neighbors_match_reference_and_sklearn_graph(rng, algorithm, d):
    from sklearn.neighbors import radius_neighbors_graph as sk_rng

    X = rng.standard_normal((200, d))
    r = 0.6 if d == 2 else 4.5
    nn = NearestNeighbors(radius=r, algorithm=algorithm).fit(X)
    dist, ind = nn.radius_neighbors()
    ref = reference.radius(X, X, r, exclude_self=True)
    for got, want in zip(ind, ref, strict=True):
        np.testing.assert_array_equal(got, want)
    G = radius_neighbors_graph(X, r, mode="distance", algorithm=algorithm)
    S = sk_rng(X, r, mode="distance")
    S.sort_indices()
    np.testing.assert_array_equal(G.indptr, S.indptr)
    np.testing.assert_array_equal(G.indices, S.indices)
    np.testing.assert_allclose(G.data, S.data, rtol=1e-10)
    sdist, sind = nn.radius_neighbors(radius=r, sort_results=True)
    for row_d in sdist:
        assert (np.diff(row_d) >= 0).all()


@pytest.mark.parametrize("mode", ["connectivity", "distance"])
@pytest.mark.parametrize("include_self", [False, True])
@pytest.mark.parametrize("d", [3, 30])
def test_kneighbors_graph_matches_sklearn(rng, mode, include_self, d):
    from sklearn.neighbors import kneighbors_graph as sk_kng

    X = rng.standard_normal((150, d))
    G = kneighbors_graph(X, 5, mode=mode, include_self=include_self)
    S = sk_kng(X, 5, mode=mode, include_self=include_self)
    assert G.shape == S.shape and G.format == "csr"
    G.sort_indices()
    S.sort_indices()
    np.testing.assert_array_equal(G.indptr, S.indptr)
    np.testing.assert_array_equal(G.indices, S.indices)
    # scikit-learn's self-distances are norm-trick round-off (~1e-7); fastdr's are exactly 0
    np.testing.assert_allclose(G.toarray(), S.toarray(), rtol=1e-10, atol=1e-6)
    if include_self and mode == "distance":
        assert (G.diagonal() == 0).all()


@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_classifier_and_regressor_match_sklearn(rng, weights, d, dtype):
    from sklearn.neighbors import KNeighborsClassifier as SkC
    from sklearn.neighbors import KNeighborsRegressor as SkR

    X = _data(rng, 300, d, dtype)
    Q = _data(rng, 80, d, dtype)
    Q[:5] = X[:5]  # exact hits: distance weights must not divide by zero
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, 300)]
    clf = KNeighborsClassifier(n_neighbors=7, weights=weights).fit(X, y)
    sk = SkC(n_neighbors=7, weights=weights, algorithm="brute").fit(X, y)
    np.testing.assert_array_equal(clf.predict(Q), sk.predict(Q))
    tol = 1e-5 if dtype == np.float32 else 1e-9
    # rows 0-4 are exact hits: scikit-learn's norm-trick distance there is ~1e-7, not 0, so
    # it does not apply its own zero-distance rule; they are checked against the reference.
    np.testing.assert_allclose(clf.predict_proba(Q)[5:], sk.predict_proba(Q)[5:], atol=tol)
    dist, ind = reference.knn(X, Q, 7)
    np.testing.assert_array_equal(clf.predict(Q), reference.knn_vote(ind, dist, y,
                                                                      clf.classes_, weights))
    assert clf.score(Q, sk.predict(Q)) == 1.0

    yr = rng.standard_normal((300, 2))
    reg = KNeighborsRegressor(n_neighbors=7, weights=weights).fit(X, yr)
    skr = SkR(n_neighbors=7, weights=weights, algorithm="brute").fit(X, yr)
    np.testing.assert_allclose(reg.predict(Q)[5:], skr.predict(Q)[5:], rtol=tol, atol=tol)
    np.testing.assert_allclose(reg.predict(Q), reference.knn_mean(ind, dist, yr, weights),
                               rtol=tol, atol=tol)
    reg1 = KNeighborsRegressor(n_neighbors=7, weights=weights).fit(X, yr[:, 0])
    assert reg1.predict(Q).shape == (80,)


def test_distance_weights_with_exact_hit_use_only_those_points():
    X = np.array([[0.0], [0.0], [1.0], [2.0]])
    y = np.array([0, 0, 1, 1])
    clf = KNeighborsClassifier(n_neighbors=4, weights="distance").fit(X, y)
    assert clf.predict_proba([[0.0]]).tolist() == [[1.0, 0.0]]
    reg = KNeighborsRegressor(n_neighbors=3, weights="distance").fit(X, [1.0, 3.0, 10.0, 20.0])
    assert reg.predict([[0.0]]).tolist() == [2.0]
    assert np.isfinite(reg.predict(X)).all()


def test_callable_weights_and_bad_callable(rng):
    X = rng.standard_normal((50, 3))
    y = rng.integers(0, 2, 50)
    clf = KNeighborsClassifier(n_neighbors=5, weights=lambda d: np.exp(-d)).fit(X, y)
    assert clf.predict(X).shape == (50,)
    bad = KNeighborsClassifier(n_neighbors=5, weights=lambda d: d[:, :2]).fit(X, y)
    with pytest.raises(ValueError, match="must return one weight per neighbour"):
        bad.predict(X)


def test_mahalanobis_and_learner_metric_equal_transformed_euclidean(rng):
    X = rng.standard_normal((120, 4))
    y = rng.integers(0, 3, 120)
    L = rng.standard_normal((2, 4))

    class Learner:
        components_ = L

    a = KNeighborsClassifier(metric="mahalanobis", metric_params={"M": L.T @ L}).fit(X, y)
    b = KNeighborsClassifier(metric=Learner()).fit(X, y)
    c = KNeighborsClassifier().fit(X @ L.T, y)
    np.testing.assert_array_equal(a.predict(X), c.predict(X @ L.T))
    np.testing.assert_array_equal(b.predict(X), c.predict(X @ L.T))


def test_learned_metric_under_clone_names_frozen_estimator_and_the_pipeline(rng):
    """clone (and so cross-validation) copies the metric learner unfitted: the error says
    how to keep it fitted or learn it per fold, and both remedies work."""
    from sklearn.base import clone
    from sklearn.frozen import FrozenEstimator
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline

    X = rng.standard_normal((90, 4))
    y = rng.integers(0, 3, 90)
    nca = fastdr.NeighborhoodComponentsAnalysis(n_components=2, random_state=0,
                                                max_iter=5).fit(X, y)
    knn = KNeighborsClassifier(n_neighbors=3, metric=nca)
    with pytest.raises(fastdr.NotFittedError,
                       match=r"(?s)not fitted.*FrozenEstimator\(learner\).*make_pipeline"):
        clone(knn).fit(X, y)
    frozen = KNeighborsClassifier(n_neighbors=3, metric=FrozenEstimator(nca))
    np.testing.assert_array_equal(clone(frozen).fit(X, y).predict(X),
                                  knn.fit(X, y).predict(X))
    assert cross_val_score(frozen, X, y, cv=3).shape == (3,)
    pipe = make_pipeline(fastdr.NeighborhoodComponentsAnalysis(n_components=2, random_state=0,
                                                               max_iter=5),
                         KNeighborsClassifier(n_neighbors=3))
    assert cross_val_score(pipe, X, y, cv=3).shape == (3,)


@pytest.mark.jit_only  # interpreted, prange is range: one thread, nothing to compare
def test_n_jobs_gives_identical_results(rng):
    X = rng.standard_normal((700, 40))
    r1 = NearestNeighbors(n_neighbors=8, n_jobs=1).fit(X).kneighbors()
    r2 = NearestNeighbors(n_neighbors=8, n_jobs=2).fit(X).kneighbors()
    np.testing.assert_array_equal(r1[1], r2[1])
    np.testing.assert_array_equal(r1[0], r2[0])


def test_input_layouts_give_identical_results(rng):
    X = rng.integers(0, 10, (60, 5))
    base = NearestNeighbors(n_neighbors=4).fit(X).kneighbors()
    for variant in (X.tolist(), np.asfortranarray(X), np.repeat(X, 2, axis=1)[:, ::2],
                    X.astype(np.float64)):
        got = NearestNeighbors(n_neighbors=4).fit(variant).kneighbors()
        np.testing.assert_array_equal(got[1], base[1])
        np.testing.assert_allclose(got[0], base[0])


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 25))
def test_neighbours_invariant_to_row_permutation(seed, d):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, d))
    perm = rng.permutation(40)
    _, ind = NearestNeighbors(n_neighbors=3, algorithm="brute").fit(X).kneighbors()
    _, ind_p = NearestNeighbors(n_neighbors=3, algorithm="brute").fit(X[perm]).kneighbors()
    # map permuted indices back; compare as sets (ties may reorder under permutation)
    inv = np.empty(40, dtype=int)
    inv[perm] = np.arange(40)
    for row in range(40):
        assert set(perm[ind_p[inv[row]]]) == set(ind[row])


# ---- bad input: each message is matched ----


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_x_is_rejected(bad):
    X = np.ones((5, 2))
    X[2, 1] = bad
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        NearestNeighbors().fit(X)
    nn = NearestNeighbors(n_neighbors=2).fit(np.ones((5, 2)))
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        nn.kneighbors(X)


def test_empty_and_1d_x():
    with pytest.raises(ValueError, match=r"X has 0 sample\(s\)"):
        NearestNeighbors().fit(np.empty((0, 3)))
    with pytest.raises(ValueError, match="Expected a 2-D array for X, got a 1-D array"):
        NearestNeighbors().fit(np.ones(5))


def test_n_neighbors_checks():
    X = np.random.default_rng(1).standard_normal((5, 2))
    with pytest.raises(ValueError, match=_invalid('n_neighbors',
                                                  'an int in the range [1, inf)',
                                                  '0')):
        NearestNeighbors(n_neighbors=0).fit(X)
    nn = NearestNeighbors(n_neighbors=5).fit(X)
    with pytest.raises(ValueError, match="n_neighbors=5 must be smaller than the number of "
                                         r"training points \(5\) when X is None"):
        nn.kneighbors()
    with pytest.raises(ValueError, match=r"n_neighbors=6 is larger than the number of training"):
        nn.kneighbors(X, n_neighbors=6)
    with pytest.raises(TypeError, match=_invalid('n_neighbors',
                                                 'an int in the range [1, inf)',
                                                 '2.5')):
        NearestNeighbors(n_neighbors=2.5).fit(X)


def test_negative_radius():
    nn = NearestNeighbors().fit(np.ones((4, 2)))
    with pytest.raises(ValueError, match="radius must be >= 0, got -1"):
        nn.radius_neighbors(radius=-1)


def test_feature_count_mismatch_at_query():
    nn = NearestNeighbors(n_neighbors=2).fit(np.ones((4, 2)))
    with pytest.raises(ValueError, match="X has 3 features, but NearestNeighbors is expecting "
                                         "2 features"):
        nn.kneighbors(np.ones((2, 3)))
    clf = KNeighborsClassifier(n_neighbors=2).fit(np.ones((4, 2)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="KNeighborsClassifier is expecting 2 features"):
        clf.predict(np.ones((2, 3)))


def test_y_length_mismatch():
    with pytest.raises(ValueError, match="X has 4, y has 3"):
        KNeighborsClassifier().fit(np.ones((4, 2)), [0, 1, 0])
    with pytest.raises(ValueError, match="X has 4, y has 5"):
        KNeighborsRegressor().fit(np.ones((4, 2)), np.ones(5))


def test_predict_before_fit():
    with pytest.raises(fastdr.NotFittedError, match="not fitted yet"):
        KNeighborsClassifier().predict(np.ones((2, 2)))
    with pytest.raises(fastdr.NotFittedError, match="not fitted yet"):
        NearestNeighbors().kneighbors()


def test_bad_weights_and_algorithm():
    with pytest.raises(ValueError, match=_invalid('weights',
                                                  "a str among {'uniform', 'distance'}"
                                                  ", a callable or None",
                                                  "'cubic'",
                                                  est="KNeighborsClassifier")):
        KNeighborsClassifier(weights="cubic").fit(np.ones((4, 2)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match=_invalid('algorithm',
                                                  "a str among {'auto', 'brute', 'kd_tree', "
                                                  "'nndescent', 'ball_tree'}",
                                                  "'cover_tree'")):
        NearestNeighbors(algorithm="cover_tree").fit(np.ones((4, 2)))


@pytest.mark.parametrize("dtype,rtol", DTYPES)
def test_symmetric_self_query_kernel_matches_reference(rng, dtype, rtol):
    # m > 2 blocks of 512 takes the symmetric (half-GEMM) self-query kernel
    X = _data(rng, 1400, 20, dtype)
    X[700] = X[3]  # a duplicate pair must find each other at distance exactly 0
    results = [NearestNeighbors(n_neighbors=6, n_jobs=j).fit(X).kneighbors() for j in (1, 2)]
    ref_d, ref_i = reference.knn(X, X, 6, exclude_self=True)
    for dist, ind in results:
        np.testing.assert_array_equal(ind, ref_i)
        np.testing.assert_allclose(dist, ref_d, rtol=rtol, atol=rtol)
        assert ind[3, 0] == 700 and dist[3, 0] == 0.0
    np.testing.assert_array_equal(results[0][0], results[1][0])


def test_single_class_and_continuous_labels():
    X = np.random.default_rng(0).standard_normal((10, 2))
    # one class fits and predicts it, as in scikit-learn
    np.testing.assert_array_equal(
        KNeighborsClassifier(n_neighbors=3).fit(X, np.full(10, 7)).predict(X), np.full(10, 7))
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        KNeighborsClassifier(n_neighbors=3).fit(X, np.linspace(0, 1, 10))
