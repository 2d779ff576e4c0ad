"""metric-learn's interface on every fastdr learner: pair_distance, pair_score, score_pairs,
get_metric, and the preprocessor (points and pairs given as indices)."""

import pickle

import numpy as np
import pytest
from scipy.spatial.distance import cdist

import fastdr
from fastdr.metric_learning import ITML, LFDA, Covariance, Mahalanobis, RCA_Supervised

from ..estimators import fit_estimator, make_estimator, small_data

LEARNERS = ["Covariance", "LFDA", "RCA", "RCA_Supervised", "MLKR", "NeighborhoodComponentsAnalysis",
            "MMC_Supervised", "MMC", "Mahalanobis", "ITML", "ITML_Supervised", "SDML",
            "SDML_Supervised", "LMNN", "NCA", "LSML", "LSML_Supervised",
            "SCML", "SCML_Supervised"]


@pytest.mark.parametrize("name", LEARNERS)
def test_pair_distance_score_and_metric_agree_with_the_matrix(name):
    X, y = small_data()
    learner = fit_estimator(make_estimator(name), X, y)
    M = learner.get_mahalanobis_matrix()
    pairs = np.stack([X[:12], X[20:32]], axis=1)
    expected = np.sqrt(np.einsum("ij,jk,ik->i", X[:12] - X[20:32], M, X[:12] - X[20:32]))
    np.testing.assert_allclose(learner.pair_distance(pairs), expected, rtol=1e-10)
    np.testing.assert_array_equal(learner.pair_score(pairs), -learner.pair_distance(pairs))
    with pytest.warns(FutureWarning, match="score_pairs will be deprecated in release 0.7.0"):
        np.testing.assert_array_equal(learner.score_pairs(pairs), learner.pair_distance(pairs))
    metric = learner.get_metric()
    assert metric(X[0], X[20]) == pytest.approx(expected[0], rel=1e-12)
    assert metric(X[0], X[20], squared=True) == pytest.approx(expected[0] ** 2, rel=1e-12)
    # the function is scipy's and scikit-learn's callable metric, and survives pickling
    np.testing.assert_allclose(cdist(X[:5], X[20:25], metric),
                               learner.pairwise(X[:5], X[20:25]), rtol=1e-9)
    assert pickle.loads(pickle.dumps(learner)).get_metric()(X[0], X[20]) == metric(X[0], X[20])


def test_get_metric_holds_a_copy_of_the_map():
    X, y = small_data()
    cov = Covariance().fit(X)
    metric = cov.get_metric()
    before = metric(X[0], X[1])
    cov.fit(X * 3.0)
    assert metric(X[0], X[1]) == before
    with pytest.raises(ValueError, match="two points of 5 features"):
        metric(X[0], X[1, :3])


def test_get_metric_takes_what_scipy_distances_take():
    X, _ = small_data()
    metric = Covariance().fit(X).get_metric()
    expected = metric(X[0], X[1])
    # lists and single rows, as scipy.spatial.distance's functions accept them
    assert metric(X[0].tolist(), X[1].tolist()) == expected
    assert metric(X[0][None], X[1][None]) == expected
    with pytest.raises(ValueError, match=r"two points of 5 features.*got shape \(2, 5\)"):
        metric(X[:2], X[1])
    # one feature: scalars and (1, 1) arrays are points
    one = Mahalanobis(weights=[4.0]).fit(X[:, :1]).get_metric()
    assert one(5.0, 6.5) == one([5.0], [6.5]) == one([[5.0]], [[6.5]]) == pytest.approx(3.0)


def test_pair_distance_keeps_digits_far_from_the_origin():
    metric = Mahalanobis(weights=[1.0, 4.0])
    a = np.array([1e8, 1e8])
    b = a + [1e-4, 0.0]
    pairs = np.array([[a, b]])
    # b - a is exact (Sterbenz); mapping a and b first and subtracting would lose the digits
    np.testing.assert_allclose(metric.pair_distance(pairs), [b[0] - a[0]], rtol=1e-15)


@pytest.mark.parametrize("bad, match", [
    (np.zeros((4, 5)), "3-D array of formed pairs"),
    (np.zeros((4, 3, 5)), r"^Tuples of 2 element\(s\) expected by Covariance\. Got tuples of 3 "),
    (np.zeros((4, 2, 3)), "3 features"),
])
def test_pair_distance_bad_shapes(bad, match):
    X, _ = small_data()
    cov = Covariance().fit(X)
    with pytest.raises(ValueError, match=match):
        cov.pair_distance(bad)


def test_an_array_preprocessor_turns_indices_into_points():
    X, y = small_data()
    idx = np.arange(0, 90, 2)
    by_index = Covariance(preprocessor=X).fit(idx)
    by_rows = Covariance().fit(X[idx])
    np.testing.assert_array_equal(by_index.components_, by_rows.components_)
    np.testing.assert_array_equal(by_index.transform(np.array([3, 5])),
                                  by_rows.transform(X[[3, 5]]))
    np.testing.assert_allclose(by_index.pair_distance(np.array([[0, 1], [2, 3]])),
                               by_rows.pair_distance(np.stack([X[[0, 2]], X[[1, 3]]], axis=1)))
    # formed points still work with a preprocessor
    np.testing.assert_array_equal(by_index.transform(X[:3]), by_rows.transform(X[:3]))
    lfda = LFDA(k=3, preprocessor=X).fit(np.arange(90), y)
    np.testing.assert_array_equal(lfda.components_, LFDA(k=3).fit(X, y).components_)


def test_a_callable_preprocessor_is_called_with_the_indices():
    X, y = small_data()
    seen = []

    def rows(indices):
        seen.append(np.array(indices))
        return X[indices]

    rca = RCA_Supervised(n_chunks=20, random_state=0, preprocessor=rows).fit(np.arange(90), y)
    assert seen and seen[-1].shape == (90,)
    direct = RCA_Supervised(n_chunks=20, random_state=0).fit(X, y)
    np.testing.assert_array_equal(rca.components_, direct.components_)


@pytest.mark.parametrize("indices, match", [
    (np.array([0, 90]), "index 90, out of range for the preprocessor's 90 rows"),
    (np.array([-1, 3]), "index -1, out of range"),
    (np.array([0.0, 1.0]), "integer indices"),
])
def test_bad_indices_are_refused_before_any_row_is_read(indices, match):
    X, _ = small_data()
    cov = Covariance(preprocessor=X).fit(np.arange(90))
    with pytest.raises(ValueError, match=match):
        cov.transform(indices)
    with pytest.raises(ValueError, match=match):
        cov.pair_distance(np.column_stack([indices, indices]))
    with pytest.raises(ValueError, match=match):
        Covariance(preprocessor=X).fit(indices)


def test_a_callable_preprocessor_receives_the_indicators_as_given():
    # a callable defines its indicators (ids, file names): they reach it unconverted
    X, y = small_data()
    ids = np.array([f"id{i}" for i in range(90)])
    seen = []

    def load(indicators):
        seen.append(indicators)
        return X[[int(name[2:]) for name in indicators]]

    by_id = LFDA(k=3, preprocessor=load).fit(ids, y)
    assert seen[0].dtype.kind == "U"
    np.testing.assert_array_equal(by_id.components_, LFDA(k=3).fit(X, y).components_)
    np.testing.assert_array_equal(by_id.pair_distance(np.array([["id0", "id5"]])),
                                  by_id.pair_distance(X[[0, 5]][None]))


def test_shape_errors_are_metric_learn_s_with_fastdr_s_remedy_as_a_note():
    X, _ = small_data()
    cov = Covariance().fit(X)
    with pytest.raises(ValueError) as raised:
        cov.transform(X[0])
    assert str(raised.value) == ("2D array of formed points expected by Covariance. Found 1D "
                                 f"array instead:\ninput={X[0]}. Reshape your data and/or use "
                                 "a preprocessor.\n")
    assert "X.reshape(1, -1) for one point" in raised.value.__notes__[0]
    # learners without a preprocessor parameter keep fastdr's message, which names no
    # preprocessor
    with pytest.raises(ValueError, match="Expected a 2-D array for X"):
        Mahalanobis(weights=np.ones(5)).fit(X).transform(X[0])


def test_pair_learners_have_metric_learn_s_calibration_check():
    ITML._validate_calibration_params()
    ITML()._validate_calibration_params(strategy="max_tnr", min_rate=0.2)
    with pytest.raises(ValueError, match='Got "weird" instead'):
        ITML._validate_calibration_params(strategy="weird")
    with pytest.raises(ValueError, match=r"min_rate must be a number in\[0, 1\]. Got 1.2 "):
        ITML._validate_calibration_params(strategy="max_tpr", min_rate=1.2)
    assert ITML._tuple_size == 2


def test_a_failing_or_wrong_callable_preprocessor_is_named():
    X, _ = small_data()

    def broken(indices):
        raise KeyError("no such id")

    with pytest.raises(ValueError, match="preprocessor raised KeyError"):
        Covariance(preprocessor=broken).fit(np.arange(5))
    with pytest.raises(ValueError, match="returned 3 rows for 5 indices"):
        Covariance(preprocessor=lambda i: X[:3]).fit(np.arange(5))


def test_one_dimensional_points_without_a_preprocessor_are_refused():
    with pytest.raises(ValueError, match="X is 1-D.*preprocessor to pass indices"):
        Covariance().fit(np.arange(10.0))


def test_learners_plug_into_fastdr_neighbours():
    X, y = small_data()
    lfda = LFDA(k=3, n_components=2).fit(X, y)
    knn = fastdr.KNeighborsClassifier(n_neighbors=3, metric=lfda).fit(X, y)
    plain = fastdr.KNeighborsClassifier(n_neighbors=3).fit(lfda.transform(X), y)
    np.testing.assert_array_equal(knn.predict(X), plain.predict(lfda.transform(X)))


def test_pair_distance_and_metric_refuse_overflow():
    X, _ = small_data()
    cov = Covariance().fit(X)
    big = np.zeros((1, 2, 5))
    big[0, 0, 0] = 1e160
    with pytest.raises(ValueError, match="too large to compute distances"):
        cov.pair_distance(big)
    with pytest.raises(ValueError, match="overflows float64"):
        cov.get_metric()(big[0, 0], big[0, 1])


# metric-learn's tests compare these messages for equality (test_base_metric.py,
# test_mahalanobis_mixin.py); fastdr's reason and remedy ride along as a PEP 678 note
N_COMPONENTS_LEARNERS = ["MMC", "MMC_Supervised", "LFDA", "LMNN", "NCA", "RCA",
                         "RCA_Supervised", "MLKR"]


@pytest.mark.parametrize("n_components", [0, -1, 5])
@pytest.mark.parametrize("name", N_COMPONENTS_LEARNERS)
def test_bad_n_components_is_metric_learns_message_with_a_remedy(name, n_components):
    X, y = small_data()
    X = X[:, :4]
    learner = make_estimator(name).set_params(n_components=n_components)
    with pytest.raises(ValueError) as info:
        fit_estimator(learner, X, y)
    assert str(info.value) == "Invalid n_components, must be in [1, 4]"
    assert "Pass an int from 1 to 4, or None for 4." in info.value.__notes__[-1]


@pytest.mark.parametrize("name,names", [
    ("LMNN", "'auto', 'pca', 'identity', 'random', 'lda'"),
    ("NCA", "'auto', 'pca', 'identity', 'random', 'lda'"),
    ("MLKR", "'auto', 'pca', 'identity', 'random'"),
])
@pytest.mark.parametrize("init", [1, "lbfgs", None])
def test_bad_init_is_metric_learns_message(name, names, init):
    X, y = small_data()
    learner = make_estimator(name).set_params(init=init)
    with pytest.raises(fastdr.exceptions.InvalidParameterError) as info:
        fit_estimator(learner, X, y)
    assert str(info.value) == (f"`init` must be {names} or a numpy array of shape "
                               "(n_components, n_features).")
    assert f"Got {init!r} instead." in info.value.__notes__[-1]


@pytest.mark.parametrize("name", ["LMNN", "NCA", "MLKR", "NeighborhoodComponentsAnalysis"])
def test_init_array_of_the_wrong_shape_is_the_shared_message_with_a_remedy(name):
    X, y = small_data()
    d = X.shape[1]
    learner = make_estimator(name).set_params(init=np.eye(d, d + 1))
    with pytest.raises(ValueError) as info:
        fit_estimator(learner, X, y)
    assert str(info.value) == (
        f"The input dimensionality ({d + 1}) of the given linear transformation `init` must "
        f"match the dimensionality of the given inputs `X` ({d}).")
    assert info.value.__notes__ == [f"Pass an init of shape (n_components, {d})."]
