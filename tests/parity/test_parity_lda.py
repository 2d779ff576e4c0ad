"""LinearDiscriminantAnalysis against scikit-learn 1.9's, on the same data: every solver,
shrinkage, priors, n_components and store_covariance; the same answers, attributes and
errors."""

import inspect
import warnings

import numpy as np
import pytest
from sklearn import discriminant_analysis as skda
from sklearn.covariance import OAS, EmpiricalCovariance, LedoitWolf

import fastdr.discriminant._class_scatter as class_scatter_module
from fastdr import LinearDiscriminantAnalysis as LDA
from fastdr.discriminant._class_scatter import within_r_factor

SKLDA = skda.LinearDiscriminantAnalysis
SOLVERS = ["svd", "lsqr", "eigen"]


def _classes(seed, m=150, d=5, k=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, m)
    y[:k] = np.arange(k)
    mix = rng.standard_normal((d, d)) * np.linspace(1.5, 0.4, d) + 2.0 * np.eye(d)
    X = rng.standard_normal((m, d)) @ mix + 1.5 * rng.standard_normal((k, d))[y] + 3.0
    return X, y


def _up_to_sign(a, b, atol):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    signs = np.sign(np.sum(a * b, axis=0))
    signs[signs == 0] = 1
    np.testing.assert_allclose(a, b * signs, rtol=0, atol=atol)


def _assert_same_model(ours, sk, Xt, yt, k):
    scale = np.abs(sk.decision_function(Xt)).max()
    np.testing.assert_array_equal(ours.predict(Xt), sk.predict(Xt))
    np.testing.assert_allclose(ours.decision_function(Xt), sk.decision_function(Xt), rtol=1e-8,
                               atol=1e-10 * scale)
    np.testing.assert_allclose(ours.predict_proba(Xt), sk.predict_proba(Xt), rtol=1e-8,
                               atol=1e-10)
    ours_log, sk_log = ours.predict_log_proba(Xt), sk.predict_log_proba(Xt)
    accurate = sk_log > -20  # sklearn takes the log of rounded probabilities
    np.testing.assert_allclose(ours_log[accurate], sk_log[accurate], rtol=1e-7, atol=1e-8)
    assert ours.score(Xt, yt) == sk.score(Xt, yt)
    for name in ("coef_", "intercept_"):
        value = getattr(sk, name)
        np.testing.assert_allclose(getattr(ours, name), value, rtol=1e-8,
                                   atol=1e-10 * np.abs(value).max())
    assert ours.coef_.shape == sk.coef_.shape and ours.intercept_.shape == sk.intercept_.shape
    for name in ("means_", "priors_", "classes_", "xbar_", "explained_variance_ratio_",
                 "covariance_", "n_features_in_"):
        if not hasattr(sk, name):
            continue
        np.testing.assert_allclose(getattr(ours, name), getattr(sk, name), rtol=1e-9,
                                   atol=1e-12)


@pytest.mark.parametrize("store_covariance", [False, True])
@pytest.mark.parametrize("n_components", [None, 1])
@pytest.mark.parametrize("priors", [None, "skewed"])
@pytest.mark.parametrize("shrinkage", [None, "auto", 0.3])
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("k", [2, 4])
def test_lda_matches_sklearn(k, solver, shrinkage, priors, n_components, store_covariance):
    X, y = _classes(k, k=k)
    Xt, yt = _classes(k + 10, m=80, k=k)
    if priors == "skewed":
        priors = np.arange(1.0, k + 1) / np.arange(1.0, k + 1).sum()
    params = dict(solver=solver, shrinkage=shrinkage, priors=priors,
                  n_components=n_components, store_covariance=store_covariance)
    ours, sk = LDA(**params), SKLDA(**params)
    if solver == "svd" and shrinkage is not None:
        for est in (ours, sk):
            with pytest.raises(NotImplementedError, match="shrinkage not supported with 'svd' "
                               "solver"):
                est.fit(X, y)
        return
    ours.fit(X, y)
    sk.fit(X, y)
    _assert_same_model(ours, sk, Xt, yt, k)
    assert hasattr(ours, "covariance_") == hasattr(sk, "covariance_")
    assert hasattr(ours, "scalings_") == hasattr(sk, "scalings_")
    assert hasattr(ours, "explained_variance_ratio_") == hasattr(sk, "explained_variance_ratio_")
    if solver == "lsqr":
        for est in (ours, sk):
            with pytest.raises(NotImplementedError, match="transform not implemented for "
                               r"'lsqr' solver \(use 'svd' or 'eigen'\)"):
                est.transform(Xt)
        return
    Z = ours.transform(Xt)
    _up_to_sign(Z, sk.transform(Xt), 1e-8 * np.abs(Z).max())
    _up_to_sign(ours.fit_transform(X, y), sk.transform(X), 1e-8 * np.abs(Z).max())
    d = Z.shape[1]
    if solver == "svd":
        assert ours.scalings_.shape == sk.scalings_.shape
    _up_to_sign(ours.scalings_[:, :d], sk.scalings_[:, :d], 1e-8 * np.abs(sk.scalings_).max())


@pytest.mark.parametrize("estimator", [OAS, LedoitWolf, EmpiricalCovariance])
@pytest.mark.parametrize("solver", ["lsqr", "eigen"])
def test_lda_covariance_estimator_matches_sklearn(solver, estimator):
    X, y = _classes(3)
    Xt, yt = _classes(4, m=80)
    ours = LDA(solver=solver, covariance_estimator=estimator()).fit(X, y)
    sk = SKLDA(solver=solver, covariance_estimator=estimator()).fit(X, y)
    _assert_same_model(ours, sk, Xt, yt, 3)
    if solver == "eigen":
        _up_to_sign(ours.transform(Xt), sk.transform(Xt), 1e-8)
    # the estimator is fitted in place, last on all of X (eigen) or on the last class (lsqr)
    np.testing.assert_allclose(ours.covariance_estimator.covariance_,
                               sk.covariance_estimator.covariance_, rtol=1e-12)


def test_lda_svd_tol_cuts_the_same_rank_as_sklearn():
    rng = np.random.default_rng(8)
    X, y = _classes(8, d=6)
    X[:, 5] = X[:, 0] + 1e-3 * rng.standard_normal(X.shape[0])  # a nearly repeated feature
    for tol in (1e-4, 1e-2):
        ours = LDA(tol=tol).fit(X, y)
        sk = SKLDA(tol=tol).fit(X, y)
        assert ours.scalings_.shape == sk.scalings_.shape
        _assert_same_model(ours, sk, X, y, 3)
        _up_to_sign(ours.transform(X), sk.transform(X), 1e-8)


@pytest.mark.parametrize("solver", ["svd", "lsqr"])
def test_lda_singular_within_scatter_fits_as_sklearn(solver):
    # fewer samples than features, and a feature constant within every class: sklearn's svd
    # solver drops the null directions, its lsqr solver takes the minimum-norm solution
    X, y = _classes(9, m=12, d=20)
    X[:, 3] = np.where(y == 0, 5.0, 7.0)
    ours = LDA(solver=solver).fit(X, y)
    sk = SKLDA(solver=solver).fit(X, y)
    _assert_same_model(ours, sk, X, y, 3)
    if solver == "svd":
        assert ours.scalings_.shape == sk.scalings_.shape
        _up_to_sign(ours.transform(X), sk.transform(X), 1e-8)


def test_lda_float32_and_feature_names_as_sklearn():
    pd = pytest.importorskip("pandas")
    X, y = _classes(10)
    X32 = X.astype(np.float32)
    ours, sk = LDA().fit(X32, y), SKLDA().fit(X32, y)
    Z = ours.transform(X32)
    assert Z.dtype == sk.transform(X32).dtype == np.float32
    _up_to_sign(Z, sk.transform(X32), 1e-3)
    assert (ours.predict(X32) == sk.predict(X32)).mean() > 0.99
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    ours, sk = LDA().fit(frame, y), SKLDA().fit(frame, y)
    np.testing.assert_array_equal(ours.feature_names_in_, sk.feature_names_in_)
    np.testing.assert_array_equal(ours.get_feature_names_out(), sk.get_feature_names_out())


def test_lda_signature_matches_sklearn():
    ours = inspect.signature(LDA).parameters
    theirs = inspect.signature(SKLDA).parameters
    positional = [name for name, p in ours.items() if p.kind == p.POSITIONAL_OR_KEYWORD]
    assert positional == list(theirs)  # the same names, order and positional use
    for name, param in theirs.items():
        assert ours[name].default == param.default, name
    extras = [name for name in ours if name not in theirs]
    assert extras == ["n_jobs"] and ours["n_jobs"].kind == inspect.Parameter.KEYWORD_ONLY
    est = LDA("eigen", None, None, 1)
    assert (est.solver, est.n_components) == ("eigen", 1)


def _error_cases():
    X, y = _classes(11)
    lone = y.copy()
    return [
        ("shrinkage with svd", dict(solver="svd", shrinkage=0.5), X, y, NotImplementedError),
        ("estimator with svd", dict(covariance_estimator=OAS()), X, y, ValueError),
        ("estimator and shrinkage", dict(solver="lsqr", shrinkage=0.5,
                                         covariance_estimator=OAS()), X, y, ValueError),
        ("estimator and shrinkage, eigen", dict(solver="eigen", shrinkage="auto",
                                                covariance_estimator=OAS()), X, y, ValueError),
        ("too many components", dict(n_components=3), X, y, ValueError),
        ("as many samples as classes", dict(), X[:3], np.arange(3), ValueError),
        ("negative priors", dict(priors=[0.5, 0.7, -0.2]), X, lone, ValueError),
        ("no covariance_", dict(solver="lsqr", covariance_estimator=_NoCovariance()), X, y,
         ValueError),
    ]


class _NoCovariance:
    def fit(self, X, y=None):
        return self

    def get_params(self, deep=True):
        return {}


@pytest.mark.parametrize("case", range(len(_error_cases())))
def test_lda_errors_have_sklearns_class_and_key_phrase(case):
    what, params, X, y, error = _error_cases()[case]
    with pytest.raises(error) as theirs:
        SKLDA(**params).fit(X, y)
    with pytest.raises(error) as ours:
        LDA(**params).fit(X, y)
    assert str(theirs.value).rstrip(".") in str(ours.value), what


def test_lda_priors_warning_has_sklearns_key_phrase():
    X, y = _classes(12)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        sk = SKLDA(priors=[1.0, 0.5, 0.5]).fit(X, y)
    phrase = str(theirs[0].message)
    with pytest.warns(UserWarning, match=phrase):
        ours = LDA(priors=[1.0, 0.5, 0.5]).fit(X, y)
    np.testing.assert_allclose(ours.priors_, sk.priors_)


def test_lda_svd_never_forms_the_within_class_covariance(monkeypatch):
    # the default solver reads X through the blocked QR only (store_covariance=False)
    import fastdr.discriminant._lda as discriminant

    def forbidden(*args, **kwargs):
        raise AssertionError("class_scatter called by the svd solver")

    monkeypatch.setattr(discriminant, "class_scatter", forbidden)
    X, y = _classes(13)
    LDA().fit(X, y)
    with pytest.raises(AssertionError, match="class_scatter called"):
        LDA(store_covariance=True).fit(X, y)


@pytest.mark.parametrize("route", ["cholesky_qr2", "tsqr"])
@pytest.mark.parametrize("m, d", [(90, 4), (9, 12)])
def test_within_r_factor_over_many_blocks_matches_the_centred_data(monkeypatch, m, d, route):
    # blocks of 4 d rows straddle class boundaries; R^T R = Z^T Z and Z's singular values
    monkeypatch.setattr(class_scatter_module, "scatter_block_rows", lambda d: 1)
    if route == "tsqr":
        monkeypatch.setattr(class_scatter_module, "_cholesky_qr2", lambda *args: None)
    rng = np.random.default_rng(14)
    X = rng.standard_normal((m, d)) + 100.0
    codes = rng.integers(0, 3, m)
    codes[:3] = np.arange(3)
    counts = np.bincount(codes)
    means = np.array([X[codes == k].mean(axis=0) for k in range(3)])
    inv_scale = rng.random(d) + 0.5
    Z = np.vstack([(X[codes == k] - means[k]) * inv_scale for k in range(3)])
    R = within_r_factor(X, codes, counts, means, inv_scale)
    assert R.shape == (min(m, d), d)
    np.testing.assert_array_equal(R, np.triu(R))
    np.testing.assert_allclose(R.T @ R, Z.T @ Z, atol=1e-12 * np.abs(Z.T @ Z).max())
    np.testing.assert_allclose(np.linalg.svd(R, compute_uv=False),
                               np.linalg.svd(Z, compute_uv=False)[: min(m, d)], atol=1e-12)


def _within_data(rng, m, d, collinear=0.0):
    X = rng.standard_normal((m, d)) * (rng.random(d) * 10 + 0.1) + 50.0
    if collinear:
        X[:, 1] = X[:, 0] + collinear * rng.standard_normal(m)
    codes = np.arange(m) % 4
    counts = np.bincount(codes)
    means = np.array([X[codes == k].mean(axis=0) for k in range(4)])
    inv_scale = 1.0 / (X.std(axis=0) * np.sqrt(m))
    return X, codes, counts, means, inv_scale


def test_cholesky_qr2_gives_householders_r_up_to_row_signs(rng, monkeypatch):
    from fastdr.discriminant._class_scatter import _cholesky_qr2

    args = _within_data(rng, 3000, 30)
    R = _cholesky_qr2(*args, None)
    assert R is not None
    np.testing.assert_array_equal(R, np.triu(R))
    monkeypatch.setattr(class_scatter_module, "_cholesky_qr2", lambda *a: None)
    householder = within_r_factor(*args)
    signs = np.sign(np.diag(R)) * np.sign(np.diag(householder))
    np.testing.assert_allclose(R, signs[:, None] * householder, rtol=0,
                               atol=1e-14 * np.abs(householder).max())


def test_an_ill_conditioned_within_class_scatter_takes_householder_qr(rng):
    # cond(Z) about 1e7: past CholeskyQR2's limit (its Gram matrix would lose every digit)
    from fastdr.discriminant._class_scatter import _cholesky_qr2

    X, codes, counts, means, inv_scale = _within_data(rng, 2000, 6, collinear=1e-6)
    assert _cholesky_qr2(X, codes, counts, means, inv_scale, None) is None
    Z = np.vstack([(X[codes == k] - means[k]) * inv_scale for k in range(4)])
    R = within_r_factor(X, codes, counts, means, inv_scale)
    np.testing.assert_allclose(np.linalg.svd(R, compute_uv=False),
                               np.linalg.svd(Z, compute_uv=False), rtol=1e-9)
    ours = LDA(solver="svd").fit(X, codes)
    sk = skda.LinearDiscriminantAnalysis(solver="svd").fit(X, codes)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), sk.predict_proba(X), atol=1e-8)
