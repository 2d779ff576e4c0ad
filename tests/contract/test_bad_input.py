"""The bad-input catalogue, run over every public estimator (see tests/estimators.py)."""

import re

import numpy as np
import pytest

import fastdr

from ..estimators import (
    fit_estimator,
    fit_output,
    make_estimator,
    query_points,
    small_data,
    x_estimators,
)

NAMES = [name for name, _ in x_estimators()]  # pair learners: tests/estimators.py
SUPERVISED = {"KNeighborsClassifier", "KNeighborsRegressor", "LinearDiscriminantAnalysis",
              "NeighborhoodComponentsAnalysis", "MMC_Supervised", "LFDA", "RCA_Supervised", "MLKR",
              "ITML_Supervised", "LMNN", "NCA", "SDML_Supervised", "LSML_Supervised",
              "SCML_Supervised"}
# learn nothing from X: a fixed metric fits any sample count, on its own feature count only
FIXED_METRICS = {"Mahalanobis"}
FROM_DATA = [name for name in NAMES if name not in FIXED_METRICS]
CLASS_BASED = {"KNeighborsClassifier", "LinearDiscriminantAnalysis",
               "NeighborhoodComponentsAnalysis", "MMC_Supervised", "LFDA", "RCA_Supervised",
               "ITML_Supervised", "LMNN", "NCA", "SDML_Supervised", "LSML_Supervised",
               "SCML_Supervised"}


def _fit(est, X, y):
    # MMC: index pairs drawn from y; RCA: chunklets drawn from y
    if est.__class__.__name__ in SUPERVISED | {"MMC", "RCA"}:
        return fit_estimator(est, X, y)
    return est.fit(X)


def _query(est, X):
    return query_points(est, X)


def _assert_same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nonfinite_x_at_fit_and_query(name, bad):
    X, y = small_data()
    Xb = X.copy()
    Xb[4, 2] = bad
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        _fit(make_estimator(name), Xb, y)
    est = _fit(make_estimator(name), X, y)
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        _query(est, Xb)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_y_for_regression(bad):
    X, y = small_data()
    yb = y.astype(float)
    yb[3] = bad
    with pytest.raises(ValueError, match="y contains NaN or infinity"):
        make_estimator("KNeighborsRegressor").fit(X, yb)


@pytest.mark.parametrize("name", NAMES)
def test_empty_input(name):
    X, y = small_data()
    with pytest.raises(ValueError, match=r"X has 0 sample\(s\)"):
        _fit(make_estimator(name), X[:0], y[:0])
    with pytest.raises(ValueError, match=r"X has 0 feature\(s\)"):
        _fit(make_estimator(name), X[:, :0], y)


_TOO_FEW = re.escape("X has 1 sample(s) (shape (1, 5)), but at least 2 are required.")
SINGLE_SAMPLE = {
    "NearestNeighbors": re.escape("n_neighbors=4 must be smaller than the number of training "
                                  "points (1) when X is None, because each point excludes "
                                  "itself. Fit on at least 5 points."),
    "KNeighborsClassifier": re.escape("n_neighbors=4 is larger than the number of training "
                                      "points (1). Use n_neighbors <= 1"),
    "KNeighborsRegressor": re.escape("n_neighbors=4 is larger than the number of training "
                                     "points (1). Use n_neighbors <= 1"),
    "LocallyLinearEmbedding": re.escape("n_neighbors=8 must be smaller than the number of "
                                        "samples, n_samples=1, because each point is "
                                        "reconstructed from other points. Pass at least 4 "
                                        "samples."),
}


@pytest.mark.parametrize("name", FROM_DATA)
def test_single_sample_is_a_clear_error(name):
    X, y = small_data()
    with pytest.raises(ValueError, match=SINGLE_SAMPLE.get(name, _TOO_FEW)):
        fit_output(make_estimator(name), X[:1], y[:1])


# the estimators that cannot return n_components=2 columns from one feature, and why
SINGLE_FEATURE_ERRORS = {
    "PCA": re.escape("n_components=2 must be between 0 and min(n_samples, n_features)=1 "
                     "with svd_solver="),
    "IncrementalPCA": re.escape("n_components=2 invalid for n_features=1, need more rows "
                                "than columns for IncrementalPCA processing"),
    "NeighborhoodComponentsAnalysis": re.escape("`n_components` (2) cannot be greater than the "
                                                "given data dimensionality (1)!"),
    "MLKR": re.escape("Invalid n_components, must be in [1, 1]"),
    "LFDA": re.escape("Invalid n_components, must be in [1, 1]"),
    "LMNN": re.escape("Invalid n_components, must be in [1, 1]"),
    "NCA": re.escape("Invalid n_components, must be in [1, 1]"),
    "SDML_Supervised": re.escape("Cannot fit SDML with 1 feature(s): the graphical lasso needs "
                                 "two or more."),
    # scikit-learn's LLE refuses n_components > n_features too (issue 15 parity)
    "LocallyLinearEmbedding": re.escape("output dimension must be less than or equal to "
                                        "input dimension: n_components=2, but X has 1 "
                                        "features. Use n_components <= 1."),
}


@pytest.mark.parametrize("name", FROM_DATA)
def test_single_feature_gives_finite_result_or_names_n_components(name):
    X, y = small_data()
    if name in SINGLE_FEATURE_ERRORS:
        with pytest.raises(ValueError, match=SINGLE_FEATURE_ERRORS[name]):
            fit_output(make_estimator(name), X[:, :1], y)
        return
    out = fit_output(make_estimator(name), X[:, :1], y)
    assert np.isfinite(np.asarray(out, dtype=float)).all()


def test_fixed_metric_takes_any_sample_count_but_only_its_feature_count():
    X, y = small_data()
    metric = make_estimator("Mahalanobis")
    out = fit_output(metric, X[:1], y[:1])
    assert out.shape == (1, 5) and np.isfinite(out).all()
    for width in (1, 8):
        with pytest.raises(ValueError, match=rf"X has {width} features, but the metric is "
                                             r"defined on 5 features"):
            fit_output(make_estimator("Mahalanobis"), np.ones((10, width)), y[:10])


@pytest.mark.parametrize("name", NAMES)
def test_string_object_and_complex_input(name):
    X, y = small_data()
    with pytest.raises(ValueError, match="non-numeric values"):
        _fit(make_estimator(name), np.full(X.shape, "a"), y)
    with pytest.raises(ValueError, match="Complex data not supported"):
        _fit(make_estimator(name), X + 1j, y)
    # object arrays of numbers are legitimate
    _assert_same(fit_output(make_estimator(name), X.astype(object), y),
                 fit_output(make_estimator(name), X, y))


@pytest.mark.parametrize("name", FROM_DATA)
def test_int_bool_float16_inputs_are_converted(name):
    X, y = small_data()
    Xi = np.round(X * 3).astype(np.int64)
    _assert_same(fit_output(make_estimator(name), Xi, y),
                 fit_output(make_estimator(name), Xi.astype(np.float64), y))
    X16 = X.astype(np.float16)
    _assert_same(fit_output(make_estimator(name), X16, y),
                 fit_output(make_estimator(name), X16.astype(np.float64), y))
    rng = np.random.default_rng(5)
    Xb = rng.random((X.shape[0], 8)) < 0.5
    Xb[:, 0] = True  # keep rows distinct enough to be legitimate
    Xb = np.unique(Xb, axis=0)
    yb = y[: Xb.shape[0]]
    if name == "LinearDiscriminantAnalysis":  # column 0 is constant: eigen's true complaint
        with pytest.raises(ValueError, match=re.escape("feature(s) [0] do not vary within "
                                                       "any class")):
            fit_output(make_estimator(name, solver="eigen"), Xb, yb)
        # the default svd solver drops it by its rank threshold, as scikit-learn's does
    # RCA: 6 random chunklets of 3 bool rows can leave one of the 7 varying directions
    # without within-chunklet spread (a true rank error); 10 cover them
    extra = {"n_chunks": 10} if name == "RCA_Supervised" else {}
    if name == "SDML_Supervised":  # column 0 is constant: the covariance prior has no inverse
        extra = {"prior": "identity"}
    out = fit_output(make_estimator(name, **extra), Xb, yb)
    assert np.isfinite(np.asarray(out, dtype=float)).all()


@pytest.mark.parametrize("name", NAMES)
def test_layouts_read_only_and_lists_are_legitimate_and_untouched(name):
    X, y = small_data()
    base = fit_output(make_estimator(name), X, y)
    read_only = X.copy()
    read_only.flags.writeable = False
    wide = np.repeat(X, 2, axis=1)
    for variant in (np.asfortranarray(X), wide[:, ::2], read_only, X.tolist()):
        snapshot = np.array(variant, copy=True)
        _assert_same(fit_output(make_estimator(name), variant, y), base)
        np.testing.assert_array_equal(np.asarray(variant), snapshot)


@pytest.mark.parametrize("name", NAMES)
def test_wrong_feature_count_at_query(name):
    X, y = small_data()
    est = _fit(make_estimator(name), X, y)
    with pytest.raises(ValueError, match=rf"X has 4 features, but {name} is expecting 5"):
        _query(est, X[:, :4])


SINGLE_CLASS = {
    "LinearDiscriminantAnalysis": "LinearDiscriminantAnalysis needs at least 2 classes; y has "
                                  "a single class",
    "MMC_Supervised": re.escape("MMC_Supervised needs at least 2 classes to draw cannot-link "
                                "pairs; y has a single class (0). Pass labels of two or more "
                                "classes (negative labels mean unlabelled, as in "
                                "metric-learn)."),
}


@pytest.mark.parametrize("name", sorted(SINGLE_CLASS))
def test_single_class_is_a_clear_error(name):
    X, _ = small_data()
    with pytest.raises(ValueError, match=SINGLE_CLASS[name]):
        fit_output(make_estimator(name), X, np.zeros(X.shape[0], dtype=int))


def test_a_k_nn_classifier_on_one_class_predicts_it_as_scikit_learn_does():
    X, _ = small_data()
    est = fastdr.KNeighborsClassifier(3).fit(X, np.full(X.shape[0], 7))
    np.testing.assert_array_equal(est.predict(X), np.full(X.shape[0], 7))
    np.testing.assert_array_equal(est.predict_proba(X), np.ones((X.shape[0], 1)))


@pytest.mark.parametrize("name", sorted({"KNeighborsClassifier", "LinearDiscriminantAnalysis"}
                                        & set(NAMES)))
def test_unseen_labels_at_score_count_as_wrong(name):
    X, y = small_data()
    est = make_estimator(name).fit(X, y)
    score = est.score(X, np.full(X.shape[0], 99))
    assert score == 0.0


@pytest.mark.parametrize("name", NAMES)
def test_duplicate_rows_give_finite_results(name):
    X, y = small_data()
    Xd = np.vstack([X, X[:10]])
    yd = np.concatenate([y, y[:10]])
    out = fit_output(make_estimator(name), Xd, yd)
    assert np.isfinite(np.asarray(out, dtype=float)).all()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("scale", [1e150, 1e-150])
def test_huge_and_tiny_magnitudes(name, scale):
    X, y = small_data()
    if name in ("MMC", "MMC_Supervised") and scale < 1:
        with pytest.raises(ValueError, match="MMC's eigen-decompositions failed .*X spreads "
                                             "over .*e-150 around its mean"):
            fit_output(make_estimator(name), X * scale, y)
        return
    if name == "LMNN" and scale > 1:
        # LMNN's margin of 1 makes it depend on the scale too: named, not NaN
        with pytest.raises(ValueError, match="LMNN's loss .*float64 range.*Scale X"):
            fit_output(make_estimator(name), X * scale, y)
        return
    if name == "ITML_Supervised":
        # its bounds are distances and its constraints squared distances (metric-learn's and
        # Davis et al.'s form), so the problem is not scale-free: named, not NaN
        with pytest.raises(ValueError, match="ITML's .*(float64 range|positive definite).*"
                                             "StandardScaler"):
            fit_output(make_estimator(name), X * scale, y)
        return
    if name == "LSML_Supervised" and scale > 1:
        # its residuals are distances beside a scale-free LogDet term: not scale-free either
        with pytest.raises(ValueError, match="LSML's gradient left the float64 range"):
            fit_output(make_estimator(name), X * scale, y)
        return
    if name == "SDML_Supervised" and scale > 1:
        # the graphical lasso's input holds squared distances: 1e300 overflows it
        with pytest.raises(ValueError, match="SDML's graphical lasso .*StandardScaler"):
            fit_output(make_estimator(name), X * scale, y)
        return
    out = fit_output(make_estimator(name), X * scale, y)
    assert np.isfinite(np.asarray(out, dtype=float)).all()


def _blobs(m=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, d)), np.repeat(np.arange(3), m // 3)


# -- silently wrong results and cryptic errors -----------------------------------------------


@pytest.mark.parametrize("name", ["KNeighborsClassifier", "KNeighborsRegressor"])
def test_all_zero_weights_are_refused(name):
    X, y = _blobs()
    est = make_estimator(name, weights=lambda d: np.zeros_like(d)).fit(X, y.astype(float))
    with pytest.raises(ValueError, match="All neighbors of some sample is getting zero weights"):
        est.predict(X)


def test_some_zero_weights_are_fine():
    X, y = _blobs()
    est = make_estimator("KNeighborsRegressor",
                         weights=lambda d: (np.arange(d.shape[1]) == 0) * np.ones_like(d))
    pred = est.fit(X, y.astype(float)).predict(X)
    assert np.isfinite(pred).all()


def test_complex_y_is_refused():
    X, y = _blobs()
    with pytest.raises(ValueError, match="Complex data not supported: y is complex"):
        make_estimator("KNeighborsRegressor").fit(X, y + 1j)


def test_zero_mahalanobis_matrix_is_a_clear_error():
    X, _ = _blobs()
    with pytest.raises(ValueError, match="is zero: its matrix M .* has rank 0"):
        fastdr.NearestNeighbors(metric="mahalanobis", metric_params={"M": np.zeros((3, 3))}).fit(X)


def test_labels_mixing_none_and_str_are_a_clear_error():
    X, _ = _blobs()
    y = np.array(["a", None, "b"] * 20, dtype=object)
    with pytest.raises(ValueError, match=r"y holds class labels that cannot be sorted against "
                                         r"each other \(types: NoneType, str\)"):
        make_estimator("KNeighborsClassifier").fit(X, y)


def test_ragged_lists_say_what_to_pass():
    with pytest.raises(ValueError, match="X could not be converted to an array: .*Pass a "
                                         "rectangular array of numbers"):
        make_estimator("NearestNeighbors").fit([[1.0, 2.0], [3.0]])


@pytest.mark.parametrize("value", ["inf", "nan", "-5", "0", "1e999", "lots"])
def test_memory_budget_variable_is_validated(value, monkeypatch):
    from fastdr._config import memory_budget

    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", value)
    with pytest.raises(ValueError, match=f"FASTDR_MEMORY_BUDGET='{value}' is not a usable "
                                         "memory budget: it must be a positive, finite"):
        memory_budget()


def test_memory_budget_suffixes(monkeypatch):
    from fastdr._config import memory_budget

    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "2G")
    assert memory_budget() == 2 * 2**30
    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "1500")
    assert memory_budget() == 1500


def test_small_allocations_skip_the_memory_reading_unless_a_budget_is_set(monkeypatch):
    from fastdr import _config
    from fastdr._validation.budget import check_dense_allocation
    from fastdr.exceptions import MemoryBudgetError

    monkeypatch.delenv("FASTDR_MEMORY_BUDGET", raising=False)
    reads = []
    monkeypatch.setattr(_config, "_available_memory", lambda: reads.append(1) or 10**6)
    assert check_dense_allocation((128, 1024), np.float64, what="A", alternative="") == 2**20
    assert reads == []
    with pytest.raises(MemoryBudgetError, match="needs 1,056,768 bytes"):
        check_dense_allocation((129, 1024), np.float64, what="A", alternative="")
    assert reads == [1]
    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "1K")
    with pytest.raises(MemoryBudgetError, match="needs 1,600 bytes"):
        check_dense_allocation((10, 20), np.float64, what="A", alternative="")


# -- one parameter-checking style --------------------------------------------------------

OWNED_TABLES = ["NearestNeighbors", "KNeighborsClassifier", "KNeighborsRegressor", "Isomap",
                "LocallyLinearEmbedding", "NeighborhoodComponentsAnalysis", "MMC_Supervised",
                "KernelPCA", "LinearDiscriminantAnalysis", "ClassicalMDS"]


@pytest.mark.parametrize("name", OWNED_TABLES)
def test_parameter_errors_name_parameter_allowed_values_and_received(name):
    from sklearn.utils._param_validation import InvalidParameterError

    X, y = small_data()
    with pytest.raises(InvalidParameterError,
                       match=rf"^The 'n_jobs' parameter of {name} must be a non-zero int or "
                             r"None\. Got 0 instead\.$"):
        _fit(make_estimator(name, n_jobs=0), X, y)


@pytest.mark.parametrize("name", ["PCA", "KernelPCA", "LinearDiscriminantAnalysis",
                                  "ClassicalMDS"])
def test_parameter_errors_are_fastdr_invalid_parameter_errors(name):
    # caught as fastdr.InvalidParameterError, and as the ValueError and TypeError it derives
    # from, without scikit-learn
    X, y = small_data()
    for caught in (fastdr.InvalidParameterError, ValueError, TypeError):
        with pytest.raises(caught, match=rf"^The 'n_components' parameter of {name} must be "):
            _fit(make_estimator(name, n_components=-1), X, y)


@pytest.mark.parametrize("value", [np.nan, -1.0])
def test_radius_must_be_a_non_negative_number(value):
    X, _ = _blobs()
    with pytest.raises(ValueError, match=r"The 'radius' parameter of NearestNeighbors must be "
                                         r"a float in the range \[0, inf\]"):
        fastdr.radius_neighbors_graph(X, value)
    with pytest.raises(ValueError, match="radius must be"):
        fastdr.NearestNeighbors().fit(X).radius_neighbors(X, radius=value)


def test_an_infinite_radius_finds_every_point_as_in_scikit_learn():
    X, _ = _blobs()
    graph = fastdr.radius_neighbors_graph(X, np.inf, mode="distance")
    assert graph.nnz == X.shape[0] * (X.shape[0] - 1)
    dist, ind = fastdr.NearestNeighbors(radius=np.inf).fit(X).radius_neighbors(
        X[:3], sort_results=True)
    full = fastdr.pairwise_distances(X[:3], X)
    for row in range(3):
        np.testing.assert_allclose(dist[row], np.sort(full[row]), rtol=1e-12, atol=1e-12)
        assert sorted(ind[row]) == list(range(X.shape[0]))


def test_string_targets_for_a_regressor_name_the_remedy():
    X, _ = _blobs()
    with pytest.raises(ValueError, match="y must be numeric, got dtype <U1. Pass numeric "
                                         "targets; for class labels use a classifier."):
        make_estimator("KNeighborsRegressor").fit(X, np.array(["a"] * X.shape[0]))


def test_mahalanobis_matrix_symmetry_follows_the_one_symmetry_rule():
    from fastdr._distance.metric import mahalanobis_factor
    from fastdr._validation.matrices import check_symmetric

    # asymmetry 5e-9 on entries of size 2: within allclose's rtol=1e-8 (the old rule),
    # beyond SYMMETRY_RTOL * max |M| = 2e-10 (the rule of every other symmetric input)
    M = np.array([[2.0, 1.0 + 5e-9], [1.0, 2.0]])
    with pytest.raises(ValueError, match="Array must be symmetric: M is not"):
        check_symmetric(M, "M")
    with pytest.raises(ValueError, match=r"Array must be symmetric: metric_params\['M'\] is not "
                                         r"\(the largest asymmetry"):
        mahalanobis_factor(M, name="metric_params['M']")
    # round-off asymmetry is still accepted
    L = mahalanobis_factor(np.array([[2.0, 1.0 + 1e-16], [1.0, 2.0]]))
    np.testing.assert_allclose(L.T @ L, [[2.0, 1.0], [1.0, 2.0]])
