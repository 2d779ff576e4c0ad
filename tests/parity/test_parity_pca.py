"""Drop-in parity with scikit-learn 1.9.1's PCA, on the same data (issue 14).

Every parameter value the issue names is compared against scikit-learn's own answer: the
same fitted attributes (components equal, signs included), the same scores to 1e-8, the same
error class and key phrase.
"""

import inspect
import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import decomposition as skd

import fastdr
from fastdr.decomposition._pca_mle import minka_log_evidence
from fastdr.decomposition._pca_solvers import resolve_auto

PCA_SOLVERS = ["auto", "full", "covariance_eigh", "arpack", "randomized"]
PCA_FORMS = [None, 3, 0.8, "mle", 0]
CONTAINERS = {"dense": np.asarray, "csr": sp.csr_matrix, "csc": sp.csc_matrix}


def _pca_data(seed=0, m=120, d=8, offset=2.0):
    """Gaussian data with a decaying spectrum (clear eigengaps) away from the origin."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, d)) * np.linspace(3.0, 0.2, d)
    return rng.standard_normal((m, d)) @ A + offset


def _sparse_data(seed=0, m=90, d=10):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d)) * np.linspace(3.0, 0.5, d)
    X[rng.random((m, d)) < 0.6] = 0.0
    return X


def _fit_both(X, **params):
    """Fit scikit-learn's and fastdr's PCA; either the two fitted models or the two errors."""
    out = []
    for cls in (skd.PCA, fastdr.PCA):
        try:
            out.append(cls(**params).fit(X))
        except (TypeError, ValueError) as exc:
            out.append(exc)
    return out


def _assert_same_error(sk, ours):
    assert type(ours) is type(sk), (sk, ours)
    key = str(sk).split(". ")[0]  # scikit-learn's sentence, kept first in fastdr's message
    assert str(ours).startswith(key), (str(sk), str(ours))


def _assert_same_pca(sk, ours, X, Xq, rtol=1e-8):
    assert ours.n_components_ == sk.n_components_
    assert ours.n_samples_ == sk.n_samples_ and ours.n_features_in_ == sk.n_features_in_
    assert ours.components_.shape == sk.components_.shape
    # signs included: both flip each component's largest-magnitude entry positive
    np.testing.assert_allclose(ours.components_, sk.components_, rtol=0, atol=1e-8)
    for name in ("explained_variance_", "explained_variance_ratio_", "singular_values_",
                 "mean_"):
        np.testing.assert_allclose(getattr(ours, name), getattr(sk, name), rtol=rtol,
                                   atol=1e-12, err_msg=name)
    np.testing.assert_allclose(ours.noise_variance_, sk.noise_variance_, rtol=rtol,
                               atol=1e-12)
    np.testing.assert_allclose(ours.transform(Xq), sk.transform(Xq), rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.get_covariance(), sk.get_covariance(), rtol=rtol,
                               atol=1e-10)
    np.testing.assert_allclose(ours.get_precision(), sk.get_precision(), rtol=1e-7,
                               atol=1e-9)
    dense = Xq.toarray() if sp.issparse(Xq) else Xq
    np.testing.assert_allclose(ours.score_samples(dense), sk.score_samples(dense), rtol=1e-8)
    assert ours.score(dense) == pytest.approx(sk.score(dense), rel=1e-8)
    if sk.n_components_:  # scikit-learn's check_array refuses a (n, 0) input
        np.testing.assert_allclose(ours.inverse_transform(ours.transform(Xq)),
                                   sk.inverse_transform(sk.transform(Xq)), rtol=0, atol=1e-8)


@pytest.mark.parametrize("container", list(CONTAINERS))
@pytest.mark.parametrize("whiten", [False, True])
@pytest.mark.parametrize("n_components", PCA_FORMS)
@pytest.mark.parametrize("svd_solver", PCA_SOLVERS)
def test_pca_equals_sklearn(svd_solver, n_components, whiten, container):
    X = CONTAINERS[container](_sparse_data() if container != "dense" else _pca_data())
    sk, ours = _fit_both(X, n_components=n_components, whiten=whiten, svd_solver=svd_solver,
                         random_state=0)
    if isinstance(sk, Exception) or isinstance(ours, Exception):
        _assert_same_error(sk, ours)
        return
    _assert_same_pca(sk, ours, X, X)
    np.testing.assert_allclose(ours.fit_transform(X), sk.fit_transform(X), rtol=0, atol=1e-8)


@pytest.mark.parametrize("n_components", [5, 20])
@pytest.mark.parametrize("svd_solver", PCA_SOLVERS)
def test_pca_wide_data_equals_sklearn(svd_solver, n_components):
    # covariance_eigh's noise variance averages n_features - k eigenvalues, the others
    # min(n_samples, n_features) - k
    X = _pca_data(seed=3, m=30, d=50)
    sk, ours = _fit_both(X, n_components=n_components, svd_solver=svd_solver, random_state=1)
    _assert_same_pca(sk, ours, X, _pca_data(seed=4, m=10, d=50))


@pytest.mark.parametrize("solver", ["arpack", "covariance_eigh"])  # both on the pairs kernel
def test_pca_sparse_duplicate_entries_are_summed(solver):
    csr = sp.csr_matrix(dense := _sparse_data(seed=4))  # every entry stored twice, in halves:
    X = sp.csr_matrix((np.repeat(csr.data / 2, 2), np.repeat(csr.indices, 2), csr.indptr * 2),
                      shape=dense.shape)
    assert not X.has_canonical_format
    ours = fastdr.PCA(3, svd_solver=solver, random_state=0).fit(X)
    sk = skd.PCA(3, svd_solver=solver, random_state=0).fit(dense)
    _assert_same_pca(sk, ours, X, dense)


def test_pca_sparse_fit_never_densifies(monkeypatch):
    X = sp.csr_matrix(_sparse_data(seed=2))

    def refuse(*args, **kwargs):
        raise AssertionError("X was densified")

    monkeypatch.setattr(sp.csr_matrix, "toarray", refuse)
    monkeypatch.setattr(sp.csr_matrix, "todense", refuse)
    for solver in ("auto", "arpack", "covariance_eigh"):
        fastdr.PCA(3, svd_solver=solver, random_state=0).fit_transform(X)


@pytest.mark.parametrize("normalizer", ["auto", "none", "QR", "LU"])
@pytest.mark.parametrize("iterated_power", [0, 1, 3, "auto"])
def test_pca_randomized_draws_and_normalizers_equal_sklearn(normalizer, iterated_power):
    # a flat spectrum and few iterations: the answer depends on every draw and every step
    X = np.random.default_rng(5).standard_normal((100, 40))
    params = dict(n_components=4, svd_solver="randomized", iterated_power=iterated_power,
                  power_iteration_normalizer=normalizer, n_oversamples=3, random_state=7)
    sk, ours = _fit_both(X, **params)
    exact = skd.PCA(4, svd_solver="full").fit(X)
    if iterated_power == 0:  # not converged: the same approximation, not the exact answer
        assert not np.allclose(sk.explained_variance_, exact.explained_variance_, rtol=1e-3)
    _assert_same_pca(sk, ours, X, X, rtol=1e-7)
    # fit_transform is the SVD's U S, which differs from transform(X) until converged
    np.testing.assert_allclose(fastdr.PCA(**params).fit_transform(X),
                               skd.PCA(**params).fit_transform(X), rtol=0, atol=1e-8)


@pytest.mark.parametrize("dtype, offset", [(np.float64, 2.0), (np.float64, 1e6),
                                           (np.float32, 2.0)])
@pytest.mark.parametrize("normalizer", ["none", "QR", "LU"])
@pytest.mark.parametrize("gram", [True, False])
def test_pca_randomized_on_the_scatter_matrix_equals_sklearn(monkeypatch, gram, normalizer,
                                                             dtype, offset):
    # power iterations on the d x d scatter (or forced onto products with X), implicitly
    # centred (offset 2), through a centred copy (offset 1e6) and in float32; a slow
    # spectrum and 2 iterations leave the block unconverged, so every step shows
    from fastdr import _config
    from fastdr.decomposition import _pca_solvers

    monkeypatch.setattr(_config, "RANDOMIZED_GRAM_GAIN", 1e9 if gram else 0.0)
    calls = []
    real = _pca_solvers.scatter_and_centring
    monkeypatch.setattr(_pca_solvers, "scatter_and_centring",
                        lambda *a, **kw: calls.append(a) or real(*a, **kw))
    rng = np.random.default_rng(8)
    X = (rng.standard_normal((300, 30)) * np.linspace(2.0, 1.0, 30) + offset).astype(dtype)
    params = dict(n_components=5, svd_solver="randomized", iterated_power=2,
                  power_iteration_normalizer=normalizer, random_state=3)
    sk, ours = _fit_both(X, **params)
    assert len(calls) == gram
    exact = skd.PCA(5, svd_solver="full").fit(X.astype(np.float64))
    assert not np.allclose(sk.explained_variance_, exact.explained_variance_, rtol=1e-2)
    tol = 1e-7 if dtype == np.float64 else 2e-3
    assert ours.components_.dtype == sk.components_.dtype
    np.testing.assert_allclose(ours.components_, sk.components_, rtol=0, atol=tol)
    np.testing.assert_allclose(ours.explained_variance_, sk.explained_variance_, rtol=tol)
    np.testing.assert_allclose(ours.mean_, sk.mean_, rtol=1e-6 if dtype == np.float32
                               else 1e-12)
    np.testing.assert_allclose(fastdr.PCA(**params).fit_transform(X),
                               skd.PCA(**params).fit_transform(X), rtol=0,
                               atol=tol * 10 * np.abs(X - X.mean(axis=0)).max())


@pytest.mark.parametrize("tol", [0.0, 1e-3])
def test_pca_arpack_tol_and_seed_equal_sklearn(tol):
    X = _pca_data(seed=6, m=60, d=12)
    sk, ours = _fit_both(X, n_components=4, svd_solver="arpack", tol=tol,
                         random_state=np.random.RandomState(3))
    _assert_same_pca(sk, ours, X, X, rtol=1e-7)


@pytest.mark.parametrize("seed", range(6))
def test_pca_mle_chooses_sklearns_dimension(seed):
    rng = np.random.default_rng(seed)
    m, d, rank = [(200, 10, 3), (150, 25, 6), (60, 8, 1), (300, 40, 12), (120, 6, 5),
                  (80, 15, 4)][seed]
    signal = rng.standard_normal((m, rank)) @ (rng.standard_normal((rank, d)) * 3.0)
    X = signal + 0.3 * rng.standard_normal((m, d))
    for solver in ("auto", "full", "covariance_eigh"):
        sk, ours = _fit_both(X, n_components="mle", svd_solver=solver)
        assert ours.n_components_ == sk.n_components_
        _assert_same_pca(sk, ours, X, X, rtol=1e-7)
    if seed < 4:
        assert ours.n_components_ == rank  # the planted rank, found from the data alone


def test_pca_mle_log_evidence_equals_sklearns_per_rank():
    from sklearn.decomposition._pca import _assess_dimension

    rng = np.random.default_rng(0)
    for spectrum in (np.sort(rng.random(12))[::-1] * 5,
                     np.r_[10.0, 4.0, 1.0, np.sort(np.full(5, 0.1) + rng.random(5) * 1e-3)[::-1]],
                     np.r_[3.0, 2.0, 1e-20, 0.0]):
        ours = minka_log_evidence(spectrum, 50)
        theirs = np.r_[-np.inf, [_assess_dimension(spectrum, r, 50)
                                 for r in range(1, spectrum.size)]]
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)


def test_pca_mle_on_tied_eigenvalues_is_finite():
    # scikit-learn's per-pair log raises "math domain error" when a pair it sums is a tie;
    # fastdr skips those ranks (here every rank >= 2 sums the pair (1, 2))
    spectrum = np.array([4.0, 2.0, 2.0, 0.5, 0.1])
    ll = minka_log_evidence(spectrum, 40)
    assert np.isfinite(ll[1]) and (ll[2:] == -np.inf).all()
    X = np.vstack([np.diag(np.sqrt(spectrum)), -np.diag(np.sqrt(spectrum))])
    with pytest.raises(ValueError, match="math domain error"):
        skd.PCA("mle").fit(X)
    assert fastdr.PCA("mle").fit(X).n_components_ == 1


@pytest.mark.parametrize("shape,n_components,sparse,expected", [
    ((100, 5), None, False, "covariance_eigh"), ((40, 30), 3, False, "full"),
    ((520, 60), 10, False, "randomized"), ((520, 60), 50, False, "full"),
    ((520, 60), 0.5, False, "full"), ((520, 60), "mle", False, "full"),
    ((30, 502), None, False, "full"), ((30, 502), 5, False, "randomized"),
    ((40, 30), 3, True, "arpack"),
])
def test_pca_auto_picks_sklearns_solver(shape, n_components, sparse, expected):
    # the expected solver is written out, and scikit-learn must agree with it
    X = np.random.default_rng(0).standard_normal(shape)
    X = sp.csr_matrix(X) if sparse else X
    assert skd.PCA(n_components, random_state=0).fit(X)._fit_svd_solver == expected
    assert resolve_auto(n_components, shape, sparse) == expected
    ours = fastdr.PCA(n_components, random_state=0).fit(X)
    assert ours._fit_svd_solver == expected


@pytest.mark.parametrize("X", [sp.csr_matrix(np.eye(6)), np.eye(6)])
def test_pca_errors_keep_sklearns_class_and_phrase(X):
    cases = [dict(n_components=7), dict(n_components=6, svd_solver="arpack"),
             dict(n_components="mle", svd_solver="arpack"),
             dict(n_components=0.5, svd_solver="randomized"),
             dict(svd_solver="full"), dict(svd_solver="randomized")]
    for params in cases:
        sk, ours = _fit_both(X, **params)
        if isinstance(sk, Exception):
            _assert_same_error(sk, ours)
        else:
            assert not isinstance(ours, Exception), (params, ours)
    wide = np.random.default_rng(0).standard_normal((4, 6))
    sk, ours = _fit_both(wide, n_components="mle")
    _assert_same_error(sk, ours)
    for value in (1.0, -1, "max"):
        sk, ours = _fit_both(wide, n_components=value)
        assert isinstance(ours, type(sk)) and "'n_components' parameter of PCA" in str(ours)


def test_pca_copy_false_centres_in_place_as_sklearn():
    X = _pca_data(seed=8, m=40, d=30)
    ours_X, sk_X = X.copy(), X.copy()
    Z = fastdr.PCA(3, copy=False, svd_solver="full").fit_transform(ours_X)
    Z_sk = skd.PCA(3, copy=False, svd_solver="full").fit_transform(sk_X)
    np.testing.assert_allclose(Z, Z_sk, atol=1e-8)
    np.testing.assert_allclose(ours_X, sk_X, atol=1e-12)  # both centred X
    kept = X.copy()
    fastdr.PCA(3, svd_solver="full").fit(kept)
    np.testing.assert_array_equal(kept, X)  # copy=True never writes


def test_pca_signature_matches_sklearn():
    theirs = inspect.signature(skd.PCA).parameters
    ours = inspect.signature(fastdr.PCA).parameters
    for name, param in theirs.items():
        assert name in ours and ours[name].default == param.default, name
        assert ours[name].kind == param.kind, name  # n_components positional, others keyword
    extras = set(ours) - set(theirs)
    assert extras == {"t"} and ours["t"].kind is inspect.Parameter.KEYWORD_ONLY


def test_pca_t_is_the_textbook_threshold():
    # two directions of equal variance: cumulative ratios (0.5, 1.0)
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    assert fastdr.PCA(t=0.5).fit(X).n_components_ == 1  # >= t
    assert fastdr.PCA(0.5).fit(X).n_components_ == 2  # scikit-learn's strict > t
    assert skd.PCA(0.5).fit(X).n_components_ == 2
    with pytest.raises(ValueError, match=re.escape("Pass only one of them")):
        fastdr.PCA(2, t=0.5).fit(X)
    with pytest.raises(ValueError, match="needs the whole spectrum"):
        fastdr.PCA(t=0.5, svd_solver="arpack").fit(X)


def test_pca_float32_keeps_its_dtype_like_sklearn():
    X = _pca_data(seed=9).astype(np.float32)
    for solver in PCA_SOLVERS:
        sk, ours = _fit_both(X, n_components=3, svd_solver=solver, random_state=0)
        for name in ("components_", "explained_variance_", "mean_"):
            assert getattr(ours, name).dtype == getattr(sk, name).dtype == np.float32
        assert ours.transform(X).dtype == np.float32
        np.testing.assert_allclose(ours.explained_variance_, sk.explained_variance_,
                                   rtol=1e-4)


def test_dense_arpack_centres_a_copy_and_falls_back_to_the_operator_past_the_budget(
        monkeypatch):
    from fastdr.decomposition import _pca_solvers
    from fastdr.exceptions import MemoryBudgetError

    rng = np.random.default_rng(21)
    X = rng.standard_normal((150, 12)) + 3.0
    with_copy = fastdr.PCA(3, svd_solver="arpack", random_state=0).fit(X)
    assert isinstance(_pca_solvers.centred_data(X, prefer_copy=True)[0], np.ndarray)

    def over_budget(*args, **kwargs):
        raise MemoryBudgetError("over the budget")

    monkeypatch.setattr(_pca_solvers, "check_dense_allocation", over_budget)
    A = _pca_solvers.centred_data(X, prefer_copy=True)[0]
    assert not isinstance(A, np.ndarray)  # the implicit operator
    implicit = fastdr.PCA(3, svd_solver="arpack", random_state=0).fit(X)
    np.testing.assert_allclose(np.abs(implicit.components_), np.abs(with_copy.components_),
                               atol=1e-10)
    np.testing.assert_allclose(implicit.explained_variance_, with_copy.explained_variance_,
                               rtol=1e-10)


@pytest.mark.parametrize(("container", "offset"),
                         [("dense", 2.0), ("dense", 1e6), ("csr", 2.0)])
def test_pca_arpack_on_the_fused_gram_operator_equals_sklearn(monkeypatch, container, offset):
    """The one-pass Gram route (forced on small data) gives scikit-learn's svds answer: with
    implicit centring, and (offset 1e6, dense) through the centred copy it falls back to."""
    from fastdr import _config
    from fastdr.decomposition import _pca_arpack

    calls = []
    real = _pca_arpack.gram_operator
    monkeypatch.setattr(_pca_arpack, "gram_operator",
                        lambda X, mean, **kw: calls.append(mean.any()) or real(X, mean, **kw))
    monkeypatch.setattr(_config, "ARPACK_GRAM_MIN_ELEMENTS", 0)
    monkeypatch.setattr(_config, "ARPACK_GRAM_MIN_STORED", 0)
    monkeypatch.setattr(_config, "ARPACK_EXPLICIT_GRAM_MAX_DIM", 0)
    X = _pca_data(seed=8, m=203, d=14, offset=offset)
    if container == "csr":
        X = sp.csr_matrix(np.where(np.random.default_rng(2).random(X.shape) < 0.4, X, 0.0))
    sk, ours = _fit_both(X, n_components=5, svd_solver="arpack", random_state=0)
    assert calls, "the Gram route was not taken"
    # implicit centring except for the dense X whose centring would cancel 12 digits
    assert calls[0] == (container == "csr" or offset < 1e3)
    _assert_same_pca(sk, ours, X, X, rtol=1e-7)
    np.testing.assert_allclose(
        fastdr.PCA(5, svd_solver="arpack", random_state=0).fit_transform(X),
        skd.PCA(5, svd_solver="arpack", random_state=0).fit_transform(X), rtol=0, atol=1e-7)


@pytest.mark.parametrize(("container", "offset"),
                         [("dense", 2.0), ("dense", 1e6), ("csr", 2.0)])
def test_pca_arpack_on_the_explicit_gram_matrix_equals_sklearn(monkeypatch, container,
                                                                offset):
    """A tall X with few features: ARPACK on the d x d Gram matrix formed once gives
    scikit-learn's svds answer, with implicit centring and (offset 1e6, dense) through the
    centred copy."""
    from fastdr.decomposition import _pca_arpack

    calls = []
    real = _pca_arpack.explicit_gram_operator
    monkeypatch.setattr(_pca_arpack, "explicit_gram_operator",
                        lambda X, mean, **kw: calls.append(mean.any()) or real(X, mean, **kw))
    X = _pca_data(seed=8, m=203, d=14, offset=offset)
    if container == "csr":
        X = sp.csr_matrix(np.where(np.random.default_rng(2).random(X.shape) < 0.4, X, 0.0))
    sk, ours = _fit_both(X, n_components=5, svd_solver="arpack", random_state=0)
    assert calls, "the explicit Gram route was not taken"
    assert calls[0] == (offset < 1e3)  # implicit centring unless it would cancel 12 digits
    _assert_same_pca(sk, ours, X, X, rtol=1e-7)
    np.testing.assert_allclose(
        fastdr.PCA(5, svd_solver="arpack", random_state=0).fit_transform(X),
        skd.PCA(5, svd_solver="arpack", random_state=0).fit_transform(X), rtol=0, atol=1e-7)


def test_pca_arpack_dense_explicit_route_makes_one_pass_and_a_one_thread_svd(monkeypatch):
    # dense: the scatter from centred_scatter, no centring pass; the m x k SVD on one thread
    from fastdr._runtime.blas import controlled_thread_counts
    from fastdr.decomposition import _pca_arpack, _pca_solvers

    def no_centring(*args, **kwargs):
        raise AssertionError("a separate centring pass")

    threads, real_svd = [], _pca_arpack.scipy.linalg.svd

    def svd(*args, **kwargs):
        threads.append(controlled_thread_counts() + controlled_thread_counts(numpy_own=True))
        return real_svd(*args, **kwargs)

    monkeypatch.setattr(_pca_solvers, "centring", no_centring)
    monkeypatch.setattr(_pca_arpack.scipy.linalg, "svd", svd)
    X = _pca_data(seed=9, m=300, d=20)
    sk, ours = _fit_both(X, n_components=4, svd_solver="arpack", random_state=0)
    assert len(threads) == 1 and set(threads[0]) <= {1}
    monkeypatch.undo()
    _assert_same_pca(sk, ours, X, X, rtol=1e-7)


@pytest.mark.parametrize("offset", [2.0, 1e6])
def test_pca_arpack_explicit_gram_float32_accumulates_in_float64(offset):
    """float32 rows: the Gram matrix is accumulated in float64 (ARPACK then runs in float32,
    as scikit-learn's), so the answer is float32-accurate even where scikit-learn's float32
    centred copy loses digits (offset 1e6: about 3e-3 off in its components)."""
    X = _pca_data(seed=8, m=203, d=14, offset=offset).astype(np.float32)
    exact = skd.PCA(5, svd_solver="full").fit(X.astype(np.float64))
    ours = fastdr.PCA(5, svd_solver="arpack", random_state=0).fit(X)
    assert ours.components_.dtype == np.float32
    np.testing.assert_allclose(np.abs(ours.components_), np.abs(exact.components_),
                               atol=1e-4)
    np.testing.assert_allclose(ours.explained_variance_, exact.explained_variance_,
                               rtol=1e-4)
    if offset < 1e3:
        sk = skd.PCA(5, svd_solver="arpack", random_state=0).fit(X)
        np.testing.assert_allclose(ours.components_, sk.components_, atol=1e-5)


def test_pca_arpack_csr_with_long_rows_keeps_the_sparse_products(monkeypatch):
    """A CSR X whose rows hold more than ARPACK_EXPLICIT_GRAM_MAX_ROW_ENTRIES entries does
    not form the Gram matrix (its row pairs would cost more than ARPACK's products), and
    still gives scikit-learn's answer."""
    from fastdr.decomposition import _pca_arpack

    calls = []
    real = _pca_arpack.explicit_gram_operator
    monkeypatch.setattr(_pca_arpack, "explicit_gram_operator",
                        lambda X, mean, **kw: calls.append(1) or real(X, mean, **kw))
    X = sp.csr_matrix(_pca_data(seed=3, m=400, d=120, offset=2.0))  # 120 entries a row
    assert not _pca_arpack.explicit_gram_applies(X)
    sk, ours = _fit_both(X, n_components=4, svd_solver="arpack", random_state=0)
    assert not calls
    _assert_same_pca(sk, ours, X, X, rtol=1e-7)
    short = sp.csr_matrix(X[:, :14])
    assert _pca_arpack.explicit_gram_applies(short)


def test_csr_gram_matrix_sums_duplicate_entries_and_ignores_thread_count(rng):
    """X^T X of a non-canonical CSR (duplicate, unsorted entries) equals the dense product,
    bit for bit on 1 and 2 threads."""
    import numba

    from fastdr._kernels.spectral.gram_product import csr_gram_matrix

    dense = np.where(rng.random((300, 40)) < 0.3, rng.standard_normal((300, 40)), 0.0)
    csr = sp.csr_matrix(dense)
    indptr, data, indices = [0], [], []
    for i in range(dense.shape[0]):  # each row's entries twice, as two halves, reversed
        cols = csr.indices[csr.indptr[i]:csr.indptr[i + 1]]
        vals = 0.5 * csr.data[csr.indptr[i]:csr.indptr[i + 1]]
        indices += [*cols[::-1], *cols[::-1]]
        data += [*vals[::-1], *vals[::-1]]
        indptr.append(len(indices))
    dup = sp.csr_matrix((np.array(data), np.array(indices, dtype=np.int32),
                         np.array(indptr, dtype=np.int32)), shape=dense.shape)
    assert dup.nnz == 2 * csr.nnz  # not summed on construction
    results = []
    for threads in (1, 2):
        previous = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            results.append(csr_gram_matrix(dup.indptr, dup.indices, dup.data, 40))
        finally:
            numba.set_num_threads(previous)
    np.testing.assert_allclose(results[0], dense.T @ dense, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[0].T)  # one triangle, mirrored


def test_pca_arpack_fused_route_float32_is_float32(monkeypatch):
    from fastdr import _config

    monkeypatch.setattr(_config, "ARPACK_GRAM_MIN_ELEMENTS", 0)
    monkeypatch.setattr(_config, "ARPACK_EXPLICIT_GRAM_MAX_DIM", 0)
    X = _pca_data(seed=9, m=150, d=10).astype(np.float32)
    sk, ours = _fit_both(X, n_components=3, svd_solver="arpack", random_state=0)
    assert ours.components_.dtype == np.float32
    assert ours.fit_transform(X).dtype == np.float32
    np.testing.assert_allclose(ours.explained_variance_, sk.explained_variance_, rtol=1e-4)
    np.testing.assert_allclose(np.abs(ours.components_), np.abs(sk.components_), atol=1e-4)


def test_pca_refuses_sparse_x_with_out_of_range_indices():
    X = sp.csr_matrix(np.eye(6))
    X.indices[2] = 9  # corrupt: numba would read and write out of bounds
    with pytest.raises(ValueError, match="indices must lie in"):
        fastdr.PCA(2, svd_solver="arpack").fit(X)
