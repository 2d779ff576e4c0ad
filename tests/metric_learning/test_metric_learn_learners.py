"""Covariance, LFDA, RCA and RCA_Supervised: metric-learn's learners, checked against the
definitions (tests/reference/learners.py, closed forms) and against metric-learn 0.7's numbers
where metric-learn is right (constants recorded from it: it needs scikit-learn < 1.8)."""

import numpy as np
import pytest
from scipy.linalg import eigh
from sklearn.datasets import load_iris

from fastdr.metric_learning import LFDA, RCA, Covariance, RCA_Supervised

from ..reference.learners import lfda_scatters


def _iris():
    return load_iris(return_X_y=True)


def _same_rows_up_to_sign(a, b, rtol):
    signs = np.sign(np.sum(a * b, axis=1))[:, None]
    np.testing.assert_allclose(a * signs, b, rtol=0, atol=rtol * np.abs(b).max())


def test_covariance_is_the_inverse_covariance_with_metric_learns_factor(rng):
    X = rng.standard_normal((200, 4)) @ rng.standard_normal((4, 4)) + 1e4
    cov = Covariance().fit(X)
    M = np.linalg.inv(np.cov(X, rowvar=False))
    np.testing.assert_allclose(cov.get_mahalanobis_matrix(), M, rtol=1e-8)
    # metric-learn's factor: the Cholesky factor's transpose, upper triangular
    L = cov.components_
    np.testing.assert_allclose(L, np.linalg.cholesky(M).T, rtol=1e-8)
    assert np.allclose(L, np.triu(L))
    np.testing.assert_allclose(cov.transform(X), X @ L.T, rtol=1e-12)


def test_covariance_on_iris_equals_metric_learn():
    X, _ = _iris()
    # metric_learn.Covariance().fit(iris).components_[0] (metric-learn 0.7.0)
    expected = [3.2116504713, -2.0902614694, -2.2774839907, 1.7872277978]
    np.testing.assert_allclose(Covariance().fit(X).components_[0], expected, rtol=1e-7)


def test_covariance_gives_zero_weight_to_a_constant_feature(rng):
    X = np.column_stack([rng.standard_normal((50, 2)), np.full(50, 3.0)])
    M = Covariance().fit(X).get_mahalanobis_matrix()
    assert np.isfinite(M).all()
    np.testing.assert_allclose(M[2], 0.0, atol=1e-12)
    one = Covariance().fit(np.full((10, 1), 2.0)).get_mahalanobis_matrix()
    np.testing.assert_array_equal(one, [[0.0]])  # metric-learn: inf


@pytest.mark.parametrize("k", [1, 3])
def test_lfda_solves_sugiyamas_pairwise_definition(k):
    X, y = _iris()
    X, y = X[::3], y[::3]
    Sb, Sw = lfda_scatters(X, y, k)
    values, vectors = eigh(Sb, Sw)
    values, vectors = values[::-1], vectors[:, ::-1]
    for embedding, expected in [
        ("weighted", (vectors * np.sqrt(np.maximum(values, 0))).T),
        ("plain", vectors.T),
    ]:
        got = LFDA(k=k, embedding_type=embedding).fit(X, y).components_
        _same_rows_up_to_sign(got, expected, 1e-10)
    two = LFDA(k=k, n_components=2).fit(X, y).components_
    _same_rows_up_to_sign(two, (vectors[:, :2] * np.sqrt(values[:2])).T, 1e-10)


def test_lfda_orthonormalized_spans_the_top_directions():
    X, y = _iris()
    lfda = LFDA(n_components=2, embedding_type="orthonormalized").fit(X, y)
    L = lfda.components_
    np.testing.assert_allclose(L @ L.T, np.eye(2), atol=1e-12)
    plain = LFDA(n_components=2, embedding_type="plain").fit(X, y).components_
    # same span as the plain eigenvectors
    np.testing.assert_allclose(plain @ L.T @ L, plain, atol=1e-10 * np.abs(plain).max())


def test_lfda_sign_convention_and_determinism(rng):
    X = rng.standard_normal((120, 5))
    y = np.repeat(np.arange(3), 40)
    a = LFDA().fit(X, y).components_
    b = LFDA().fit(X[::-1], y[::-1]).components_
    largest = np.abs(a).argmax(axis=1)
    assert (a[np.arange(a.shape[0]), largest] > 0).all()
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_lfda_blocks_match_one_block(rng, monkeypatch):
    from fastdr.metric_learning import _lfda

    X = rng.standard_normal((150, 4))
    y = np.repeat(np.arange(2), 75)
    whole = LFDA(k=4).fit(X, y).components_
    monkeypatch.setattr(_lfda, "BLOCK", 16)
    np.testing.assert_allclose(LFDA(k=4).fit(X, y).components_, whole, rtol=1e-11)


def test_lfda_each_class_keeps_its_own_neighbour_rank(rng):
    # a class of 2 points caps k at 1 for itself only (metric-learn lowers k for every class
    # after it, so its answer depends on the order of the classes)
    X = rng.standard_normal((62, 3))
    y = np.r_[np.zeros(2, int), np.ones(30, int), np.full(30, 2)]
    got = LFDA(k=2, embedding_type="plain").fit(X, y).components_
    Sb, Sw = lfda_scatters(X, y, 2)
    _, vectors = eigh(Sb, Sw)
    _same_rows_up_to_sign(got, vectors[:, ::-1].T, 1e-9)


def test_lfda_constant_features_get_zero_components():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X, y = X[:600], y[:600]
    lfda = LFDA(k=7).fit(X, y)
    L = lfda.components_
    assert np.isfinite(L).all() and L.shape == (64, 64)
    constant = np.flatnonzero(X.std(axis=0) == 0)
    assert constant.size > 0
    np.testing.assert_array_equal(L[:, constant], 0.0)
    rank = np.linalg.matrix_rank(X - X.mean(axis=0))
    assert np.count_nonzero(np.any(L != 0, axis=1)) == rank
    assert (np.abs(L[rank:]) == 0).all()


def test_lfda_k_at_or_past_n_features_warns_as_metric_learn():
    X, y = _iris()
    with pytest.warns(UserWarning, match="k=7 is not below n_features=4; using k=3"):
        a = LFDA(k=7).fit(X, y).components_
    np.testing.assert_array_equal(a, LFDA(k=3).fit(X, y).components_)


def _chunks_of(y, size, per_class):
    chunks = np.full(y.shape[0], -1)
    label = 0
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        for j in range(per_class):
            chunks[idx[j * size:(j + 1) * size]] = label
            label += 1
    return chunks


def test_rca_whitens_the_within_chunklet_covariance(rng):
    X = rng.standard_normal((300, 4)) @ rng.standard_normal((4, 4)) + 50.0
    y = np.repeat(np.arange(3), 100)
    chunks = _chunks_of(y, 4, 20)
    # the definition: C = sum over chunklets of the scatter around each mean / n_chunked
    C = np.zeros((4, 4))
    for j in np.unique(chunks[chunks >= 0]):
        D = X[chunks == j] - X[chunks == j].mean(axis=0)
        C += D.T @ D
    C /= np.sum(chunks >= 0)
    rca = RCA().fit(X, chunks)
    L = rca.components_
    np.testing.assert_allclose(L @ C @ L.T, np.eye(4), atol=1e-9)
    np.testing.assert_allclose(L, L.T, atol=1e-12)  # C^{-1/2}, metric-learn's factor
    np.testing.assert_allclose(rca.get_mahalanobis_matrix(), np.linalg.inv(C), rtol=1e-8)


def test_rca_reduced_keeps_the_least_chunklet_variance_directions(rng):
    X = rng.standard_normal((240, 5))
    y = np.repeat(np.arange(4), 60)
    X[:, 0] += 4 * y  # the relevant direction: large total, small within-chunklet spread
    chunks = _chunks_of(y, 3, 15)
    L = RCA(n_components=1).fit(X, chunks).components_
    assert L.shape == (1, 5)
    direction = L[0] / np.linalg.norm(L[0])
    assert abs(direction[0]) > 0.95  # a random direction: about 0.45
    full = RCA(n_components=2).fit(X, chunks)
    Z = full.transform(X[chunks >= 0])
    # within-chunklet covariance of the map is the identity
    mean_of = {j: Z[chunks[chunks >= 0] == j].mean(axis=0) for j in np.unique(chunks[chunks >= 0])}
    centred = Z - np.array([mean_of[j] for j in chunks[chunks >= 0]])
    np.testing.assert_allclose(centred.T @ centred / centred.shape[0], np.eye(2), atol=1e-9)


def test_rca_on_iris_equals_metric_learn():
    X, y = _iris()
    chunks = _chunks_of(y, 3, 10)
    # metric_learn.RCA().fit(iris, chunks).components_[0] for these chunks (metric-learn 0.7.0)
    expected = [3.594233034, -1.0243520455, -2.0584974482, 0.7675557181]
    np.testing.assert_allclose(RCA().fit(X, chunks).components_[0], expected, rtol=1e-7)


def test_rca_rank_deficient_chunklets_are_a_clear_error(rng):
    X = rng.standard_normal((40, 6))
    chunks = np.full(40, -1)
    chunks[:6] = np.repeat(np.arange(3), 2)  # 3 degrees of freedom for 6 features
    # rank 3 within the 5-dimensional span of the 6 chunked rows
    for n_components in (None, 3):  # the reduced map needs the inverse too
        with pytest.raises(ValueError, match=r"rank 3 < 5.*reduce X to at most 3 dim"):
            RCA(n_components=n_components).fit(X, chunks)
    from fastdr import PCA

    Z = PCA(n_components=3).fit_transform(X)
    assert np.isfinite(RCA().fit(Z, chunks).components_).all()


@pytest.mark.parametrize("chunks, match", [
    (np.full(10, -1), "all -1"),
    (np.r_[np.zeros(9, int), -2], "label -2"),
    (np.zeros(9, int), r"expected shape \(10,\)"),
    (np.full(10, 0.5), "integer chunklet labels"),
])
def test_rca_bad_chunks(chunks, match, rng):
    with pytest.raises(ValueError, match=match):
        RCA().fit(rng.standard_normal((10, 2)), chunks)


def test_rca_supervised_draws_disjoint_single_class_chunklets():
    X, y = _iris()
    rca = RCA_Supervised(n_chunks=30, chunk_size=3, random_state=0).fit(X, y)
    chunks = rca.chunks_
    labels, counts = np.unique(chunks[chunks >= 0], return_counts=True)
    np.testing.assert_array_equal(labels, np.arange(30))
    assert (counts == 3).all()
    for j in labels:
        assert np.unique(y[chunks == j]).size == 1
    # every class is drawn (metric-learn's draw never picks the last class)
    assert set(np.unique(y[chunks >= 0])) == {0, 1, 2}
    again = RCA_Supervised(n_chunks=30, chunk_size=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.components_, rca.components_)
    np.testing.assert_array_equal(rca.components_, RCA().fit(X, chunks).components_)


def test_rca_supervised_too_many_chunks_and_the_old_name():
    X, y = _iris()
    with pytest.raises(ValueError, match="at most 75. Pass n_chunks <= 75"):
        RCA_Supervised(n_chunks=76, random_state=0).fit(X, y)
    with pytest.warns(FutureWarning, match="num_chunks"):
        old = RCA_Supervised(num_chunks=20, random_state=0).fit(X, y)
    new = RCA_Supervised(n_chunks=20, random_state=0).fit(X, y)
    np.testing.assert_array_equal(old.components_, new.components_)


@pytest.mark.parametrize("make, gain", [
    (lambda: LFDA(k=3), 0.3), (lambda: Covariance(), 0.05),
    (lambda: RCA_Supervised(n_chunks=40, random_state=0), 0.25),
])
def test_learned_metrics_undo_noise_features_for_knn(make, gain):
    # iris plus 8 noise features of standard deviation 3: plain 3-NN falls to 0.62 (5-fold);
    # a metric learned from the labels must shrink the noise (LFDA reaches 0.97, RCA 0.94,
    # Covariance only rescales: 0.69)
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    from fastdr import KNeighborsClassifier

    X, y = _iris()
    X = np.c_[X, 3 * np.random.RandomState(0).standard_normal((150, 8))]
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    plain = cross_val_score(KNeighborsClassifier(3), X, y, cv=cv).mean()
    learned = cross_val_score(make_pipeline(make(), KNeighborsClassifier(3)), X, y,
                              cv=cv).mean()
    assert plain < 0.65
    assert learned >= plain + gain


def test_a_feature_on_a_far_larger_scale_does_not_hide_the_others(rng):
    X = rng.standard_normal((40, 3))
    y = np.repeat([0, 1], 20)
    X[20:, 0] += 3
    big = X.copy()
    big[:, 2] *= 1e8
    S = np.diag([1.0, 1.0, 1e-8])
    # LFDA's affinities follow the large feature, so its answer changes; but the span keeps
    # all three features (the rank was judged on unscaled eigenvalues, which dropped two)
    top = LFDA(k=2, n_components=1).fit(big, y).components_[0]
    assert abs(top[0]) > 0.1
    M = LFDA(k=2).fit(big, y).get_mahalanobis_matrix()
    assert np.linalg.matrix_rank(np.linalg.inv(S) @ M @ np.linalg.inv(S)) == 3
    # RCA is equivariant under a diagonal rescaling: M -> S^-1 M S^-1
    chunks = np.repeat(np.arange(10), 4)
    M, M_big = (RCA().fit(Z, chunks).get_mahalanobis_matrix() for Z in (X, big))
    np.testing.assert_allclose(M_big, S @ M @ S, rtol=1e-8, atol=1e-12 * np.abs(S @ M @ S).max())


def test_negative_labels_are_unlabelled_as_in_metric_learn(rng):
    X = rng.standard_normal((40, 3))
    y = np.r_[np.full(20, -1), np.zeros(10, int), np.ones(10, int)]
    rca = RCA_Supervised(n_chunks=10, random_state=0).fit(X, y)
    assert (rca.chunks_[:20] == -1).all()
    with pytest.raises(ValueError, match="at most 10"):
        RCA_Supervised(n_chunks=12, random_state=0).fit(X, y)


@pytest.mark.parametrize("make", [lambda: Covariance(), lambda: LFDA(),
                                  lambda: RCA_Supervised(n_chunks=10, random_state=0)])
def test_underflowing_differences_are_refused(rng, make):
    X = rng.standard_normal((40, 3)) * 1e-200
    y = np.repeat([0, 1], 20)
    with pytest.raises(ValueError, match="squared distances underflow float64"):
        make().fit(X, y)


def test_lfda_degenerate_inputs_are_named(rng):
    X = np.repeat(rng.standard_normal((10, 3)), 8, axis=0)
    y = np.repeat([0, 1], 40)
    with pytest.raises(ValueError, match="within-class scatter is singular"):
        LFDA().fit(X, y)
    X4 = np.repeat(rng.standard_normal((4, 3)), 10, axis=0)
    with pytest.raises(ValueError, match="affinities are all 0"):
        LFDA(k=2).fit(X4, np.repeat([0, 1], 20))
    # one feature: the default k is 1 (metric-learn's rule gives 0, and no affinity)
    Sb, Sw = lfda_scatters(X[::8, :1], np.repeat([0, 1], 5), 1)
    values, vectors = eigh(Sb, Sw)
    got = LFDA().fit(X[::8, :1], np.repeat([0, 1], 5)).components_
    np.testing.assert_allclose(np.abs(got), np.abs(np.sqrt(values[-1]) * vectors[:, -1:].T),
                               rtol=1e-10)


def test_orthonormalized_rows_keep_the_sign_convention(rng):
    X = rng.standard_normal((90, 4))
    y = np.repeat(np.arange(3), 30)
    L = LFDA(embedding_type="orthonormalized").fit(X, y).components_
    assert (L[np.arange(4), np.abs(L).argmax(axis=1)] > 0).all()
