"""The bad-input catalogue, run over every public estimator (see tests/estimators.py)."""

import numpy as np
import pytest

from .estimators import fit_estimator, fit_output, make_estimator, public_estimators, small_data

NAMES = [name for name, _ in public_estimators()]
SUPERVISED = {"KNeighborsClassifier", "KNeighborsRegressor", "LinearDiscriminantAnalysis",
              "NeighborhoodComponentsAnalysis", "MMC_Supervised"}
# learn nothing from X: a fixed metric fits any sample count, on its own feature count only
FIXED_METRICS = {"Mahalanobis"}
FROM_DATA = [name for name in NAMES if name not in FIXED_METRICS]
CLASS_BASED = {"KNeighborsClassifier", "LinearDiscriminantAnalysis",
               "NeighborhoodComponentsAnalysis", "MMC_Supervised"}


def _fit(est, X, y):
    if est.__class__.__name__ in SUPERVISED | {"MMC"}:  # MMC: index pairs drawn from y
        return fit_estimator(est, X, y)
    return est.fit(X)


def _query(est, X):
    for method in ("predict", "transform", "kneighbors"):
        if hasattr(est, method):
            return getattr(est, method)(X)
    raise AssertionError("no query method")


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


@pytest.mark.parametrize("name", FROM_DATA)
def test_single_sample_is_a_clear_error(name):
    X, y = small_data()
    with pytest.raises(ValueError, match=r"n_neighbors|n_components|sample|class"):
        fit_output(make_estimator(name), X[:1], y[:1])


@pytest.mark.parametrize("name", FROM_DATA)
def test_single_feature_gives_finite_result_or_names_n_components(name):
    X, y = small_data()
    try:
        out = fit_output(make_estimator(name), X[:, :1], y)
    except ValueError as exc:
        assert "n_components" in str(exc)
    else:
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
    try:
        out = fit_output(make_estimator(name), Xb, yb)
    except ValueError as exc:  # only a named, legitimate complaint is acceptable
        assert any(w in str(exc) for w in ("n_neighbors", "n_components", "class",
                                            "disconnected", "component"))
    else:
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


@pytest.mark.parametrize("name", sorted(CLASS_BASED & set(NAMES)))
def test_single_class_is_a_clear_error(name):
    X, _ = small_data()
    with pytest.raises(ValueError, match=r"(?i)class"):
        fit_output(make_estimator(name), X, np.zeros(X.shape[0], dtype=int))


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
    try:
        out = fit_output(make_estimator(name), X * scale, y)
    except (ValueError, ArithmeticError) as exc:
        assert str(exc), "the error must explain itself"
    else:
        assert np.isfinite(np.asarray(out, dtype=float)).all()
