"""Landmark MDS at fit time, ``ClassicalMDS(n_landmarks=L)`` (issue 36): the naive
de Silva-Tenenbaum reference on the same landmarks, exact MDS when L = m or when the
distances are Euclidean in n_components dimensions, the landmark choices, and the errors."""

import re

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.utils._param_validation import InvalidParameterError

import fastdr

from ..reference.manifold import classical_mds_triangulate, procrustes_disparity


def _data(m=300, d=5, seed=0):
    return np.random.default_rng(seed).standard_normal((m, d))


def _same_up_to_sign(A, B, atol):
    signs = np.sign((A * B).sum(axis=0))
    np.testing.assert_allclose(A, B * signs, atol=atol)


@pytest.mark.parametrize("metric,scipy_metric", [("manhattan", "cityblock"),
                                                 ("chebyshev", "chebyshev"),
                                                 ("cosine", "cosine")])
def test_equals_the_reference_on_the_same_landmarks(metric, scipy_metric):
    X, Q = _data(), _data(9, seed=1)
    est = fastdr.ClassicalMDS(3, metric=metric, n_landmarks=30, random_state=0).fit(X)
    L = est.landmarks_
    assert L.shape == (30,) and np.unique(L).size == 30
    D = cdist(X, X, scipy_metric)
    _, everyone = classical_mds_triangulate(D[np.ix_(L, L)], D[:, L], 3)
    _, new = classical_mds_triangulate(D[np.ix_(L, L)], cdist(Q, X[L], scipy_metric), 3)
    _same_up_to_sign(est.embedding_, everyone, 1e-10)
    _same_up_to_sign(est.transform(Q), new, 1e-10)
    np.testing.assert_allclose(est.transform(X), est.embedding_, atol=1e-10)
    block = D[np.ix_(L, L)] ** 2
    J = np.eye(30) - 1 / 30
    top = np.sort(np.linalg.eigvalsh(-0.5 * J @ block @ J))[::-1][:3]
    np.testing.assert_allclose(est.eigenvalues_, top, rtol=1e-10)


def test_every_point_a_landmark_is_exact_mds():
    X = _data(200)
    exact = fastdr.ClassicalMDS(2, metric="manhattan").fit(X)
    full = fastdr.ClassicalMDS(2, metric="manhattan", n_landmarks=200, random_state=0).fit(X)
    np.testing.assert_array_equal(full.landmarks_, np.arange(200))
    np.testing.assert_allclose(full.eigenvalues_, exact.eigenvalues_, rtol=1e-10)
    np.testing.assert_allclose(full.embedding_, exact.embedding_, atol=1e-9)


def test_euclidean_points_in_k_dimensions_are_recovered_exactly():
    # points in a plane: any 3 landmarks in general position fix every point
    plane = _data(400, 2)
    isometry = np.linalg.qr(np.random.default_rng(2).standard_normal((6, 2)))[0].T
    X = plane @ isometry
    est = fastdr.ClassicalMDS(2, n_landmarks=12, random_state=3).fit(X)
    assert procrustes_disparity(est.embedding_, plane) < 1e-20
    # the landmarks' own principal axes and centre: the exact embedding up to a rigid motion
    exact = fastdr.ClassicalMDS(2).fit(X)
    assert procrustes_disparity(est.embedding_, exact.embedding_) < 1e-20


def test_columns_signed_as_the_exact_route():
    est = fastdr.ClassicalMDS(3, metric="manhattan", n_landmarks=25, random_state=0).fit(
        _data())
    peak = est.embedding_[np.abs(est.embedding_).argmax(axis=0), np.arange(3)]
    assert (peak > 0).all()


def test_maxmin_takes_the_farthest_point_each_time():
    X = _data(150)
    est = fastdr.ClassicalMDS(2, metric="manhattan", n_landmarks=10,
                              landmark_method="maxmin", random_state=4).fit(X)
    D = cdist(X, X, "cityblock")
    chosen = [int(est.landmarks_[0])]
    while len(chosen) < 10:
        chosen.append(int(np.argmax(D[:, chosen].min(axis=1))))
    np.testing.assert_array_equal(est.landmarks_, chosen)


def test_maxmin_on_repeated_points_still_takes_distinct_landmarks():
    X = np.repeat(_data(4), 5, axis=0)  # 4 distinct points, 20 rows
    est = fastdr.ClassicalMDS(2, metric="manhattan", n_landmarks=6,
                              landmark_method="maxmin", random_state=0).fit(X)
    assert np.unique(est.landmarks_).size == 6
    assert np.isfinite(est.embedding_).all()


def test_precomputed_equals_features():
    X = _data(120)
    D = cdist(X, X, "cityblock")
    params = {"n_components": 2, "n_landmarks": 20, "random_state": 5}
    feat = fastdr.ClassicalMDS(metric="manhattan", **params).fit(X)
    pre = fastdr.ClassicalMDS(metric="precomputed", **params).fit(D)
    np.testing.assert_array_equal(pre.landmarks_, feat.landmarks_)
    np.testing.assert_allclose(pre.embedding_, feat.embedding_, atol=1e-10)
    Q = _data(4, seed=7)
    np.testing.assert_allclose(pre.transform(cdist(Q, X, "cityblock")), feat.transform(Q),
                               atol=1e-10)


def test_same_seed_same_answer_for_any_thread_count():
    X = _data(250)
    runs = [fastdr.ClassicalMDS(2, metric="manhattan", n_landmarks=40, random_state=1,
                                n_jobs=n_jobs).fit(X) for n_jobs in (1, 2, None)]
    for other in runs[1:]:
        np.testing.assert_array_equal(other.landmarks_, runs[0].landmarks_)
        np.testing.assert_array_equal(other.embedding_, runs[0].embedding_)


def test_float_n_components_and_float32():
    X = _data(200).astype(np.float32)
    with pytest.warns(RuntimeWarning, match="landmark distance matrix has .* negative"):
        est = fastdr.ClassicalMDS(0.8, metric="manhattan", n_landmarks=50,
                                  random_state=0).fit(X)
    assert est.embedding_.dtype == np.float32
    assert 1 <= est.n_components_ <= 50
    assert est.transform(X[:3]).dtype == np.float32


def test_row_blocks_give_the_one_block_answer(monkeypatch):
    from fastdr.manifold import _mds_landmarks

    X = _data(300)
    one = fastdr.ClassicalMDS(2, metric="manhattan", n_landmarks=30, random_state=0).fit(X)
    monkeypatch.setattr(_mds_landmarks, "TRIANGULATION_BLOCK_ENTRIES", 30 * 7)
    many = fastdr.ClassicalMDS(2, metric="manhattan", n_landmarks=30, random_state=0).fit(X)
    np.testing.assert_array_equal(many.embedding_, one.embedding_)


def test_too_many_landmarks_or_components():
    X = _data(50)
    with pytest.raises(ValueError, match=re.escape(
            "n_landmarks=51 is larger than the number of embedded points (50). "
            "Use n_landmarks <= 50.")):
        fastdr.ClassicalMDS(2, n_landmarks=51).fit(X)
    with pytest.raises(ValueError, match=re.escape(
            "n_components=5 is larger than n_landmarks (4). Use n_components <= 4.")):
        fastdr.ClassicalMDS(5, n_landmarks=4).fit(X)


@pytest.mark.parametrize("params", [{"n_landmarks": 0}, {"n_landmarks": 2.5},
                                    {"n_landmarks": 5, "landmark_method": "kmeans"}])
def test_bad_landmark_parameters(params):
    with pytest.raises(InvalidParameterError):
        fastdr.ClassicalMDS(**params).fit(_data(30))


def test_distance_storage_is_refused_with_landmarks():
    with pytest.raises(ValueError, match="distance_storage='implicit' applies to exact MDS"):
        fastdr.ClassicalMDS(n_landmarks=10, distance_storage="implicit").fit(_data(30))


def test_non_finite_squares_are_refused():
    X = _data(40) * 1e200
    with pytest.raises(ValueError, match="overflow|non-finite|too large"):
        fastdr.ClassicalMDS(2, metric="manhattan", n_landmarks=10).fit(X)


def test_refit_without_landmarks_forgets_them():
    X = _data(60)
    est = fastdr.ClassicalMDS(2, metric="manhattan", n_landmarks=10, random_state=0).fit(X)
    est.set_params(n_landmarks=None).fit(X)
    assert not hasattr(est, "landmarks_")
    np.testing.assert_allclose(est.transform(X), est.embedding_, atol=1e-9)


@pytest.mark.parametrize("n_landmarks", [None, 30])
def test_transform_in_row_blocks_gives_the_one_block_answer(monkeypatch, n_landmarks):
    from fastdr.manifold import _mds

    X, Q = _data(300), _data(700, seed=9)
    est = fastdr.ClassicalMDS(2, metric="manhattan", n_landmarks=n_landmarks,
                              random_state=0).fit(X)
    one = est.transform(Q)
    monkeypatch.setattr(_mds, "TRIANGULATION_BLOCK_ENTRIES", 1)  # 256-row blocks
    np.testing.assert_array_equal(est.transform(Q), one)
    _, reference = classical_mds_triangulate(
        cdist(X, X, "cityblock") if n_landmarks is None
        else cdist(X[est.landmarks_], X[est.landmarks_], "cityblock"),
        cdist(Q, X if n_landmarks is None else X[est.landmarks_], "cityblock"), 2)
    _same_up_to_sign(one, reference, 1e-9)
