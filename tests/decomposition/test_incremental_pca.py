"""IncrementalPCA (issue 36): scikit-learn's answers from every route, sparse batches never
densified, and the errors of its bad inputs."""

import re

import numpy as np
import pytest
import scipy.sparse
from sklearn import decomposition as skd

import fastdr
from fastdr.decomposition import _incremental_batch

from ..reference.linear import pca_svd

ATTRIBUTES = ("components_", "explained_variance_", "explained_variance_ratio_",
              "singular_values_", "mean_", "var_", "noise_variance_", "n_samples_seen_",
              "n_components_", "batch_size_")


def _dense(m=600, d=12, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, d)) @ rng.standard_normal((d, d)) + 3.0


def _sparse(m=500, d=60, seed=0):
    return scipy.sparse.random(m, d, density=0.05, format="csr", random_state=seed)


def _assert_same_model(ours, theirs, rtol=1e-10):
    for name in ATTRIBUTES:
        if not hasattr(theirs, name):
            continue
        mine, want = np.asarray(getattr(ours, name)), np.asarray(getattr(theirs, name))
        assert mine.dtype == want.dtype, name
        scale = max(float(np.max(np.abs(want), initial=0.0)), 1e-300)
        assert np.max(np.abs(mine - want), initial=0.0) <= rtol * scale, name


@pytest.fixture(params=["gram", "arpack"])
def route(request, monkeypatch):
    """The exact Gram routes, or ARPACK on the batch as an operator (forced on small data by
    lowering the size above which it is taken)."""
    if request.param == "arpack":
        monkeypatch.setattr(_incremental_batch, "_GRAM_MAX_SIDE", 4)
        monkeypatch.setattr(_incremental_batch, "_SIDE_PER_COMPONENT", 2)
    return request.param


@pytest.mark.parametrize("params", [
    {"n_components": 4, "batch_size": 100},  # more rows than features: M^T M
    {"n_components": 3, "batch_size": 10},  # fewer: M M^T
    {"n_components": None, "batch_size": 50},
    {"n_components": 2, "batch_size": 97, "whiten": True},  # a merged last batch
])
def test_dense_fit_equals_sklearn(params, route):
    X = _dense()
    ours = fastdr.IncrementalPCA(**params).fit(X)
    theirs = skd.IncrementalPCA(**params).fit(X)
    _assert_same_model(ours, theirs)
    np.testing.assert_allclose(ours.transform(X), theirs.transform(X), rtol=0, atol=1e-9)
    Z = theirs.transform(X[:20])
    np.testing.assert_allclose(ours.inverse_transform(Z), theirs.inverse_transform(Z),
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours.get_covariance(), theirs.get_covariance(), atol=1e-9)


@pytest.mark.parametrize("fmt", ["csr", "csc", "lil"])
@pytest.mark.parametrize("batch_size", [150, 20])
def test_sparse_fit_equals_sklearns_densified_fit(fmt, batch_size, route):
    X = _sparse().asformat(fmt)
    ours = fastdr.IncrementalPCA(n_components=4, batch_size=batch_size).fit(X)
    theirs = skd.IncrementalPCA(n_components=4, batch_size=batch_size).fit(X)
    _assert_same_model(ours, theirs)
    np.testing.assert_allclose(ours.transform(X), theirs.transform(X), rtol=0, atol=1e-10)


def test_sparse_batches_are_never_densified(monkeypatch, route):
    X = _sparse()
    d = X.shape[1]

    def guarded(original):
        def toarray(self, *args, **kwargs):
            # rows of X (b x d) must stay sparse; the Gram matrices (d x d, b x b) of sparse
            # products are dense by design
            if self.shape[1] == d and self.shape[0] != d:
                raise AssertionError("a sparse batch was densified")
            return original(self, *args, **kwargs)
        return toarray

    for cls in (scipy.sparse.csr_matrix, scipy.sparse.csr_array, scipy.sparse.csc_matrix):
        monkeypatch.setattr(cls, "toarray", guarded(cls.toarray))
        monkeypatch.setattr(cls, "todense", guarded(cls.todense))
    ours = fastdr.IncrementalPCA(n_components=3, batch_size=120).fit(X)
    for start in range(0, X.shape[0], 100):
        ours.partial_fit(X[start:start + 100])
    with pytest.raises(AssertionError, match="densified"):  # the guard itself works
        X.toarray()


def test_partial_fit_on_sparse_batches_equals_sklearn_on_dense_ones():
    X = _sparse()
    ours, theirs = fastdr.IncrementalPCA(n_components=5), skd.IncrementalPCA(n_components=5)
    for start in range(0, X.shape[0], 125):
        ours.partial_fit(X[start:start + 125])
        theirs.partial_fit(X[start:start + 125].toarray())
    _assert_same_model(ours, theirs)


def test_sparse_feature_whose_mean_dwarfs_its_spread():
    # X^T X - b m m^T would cancel ~10 digits in column 0: the scatter is centred exactly
    X = _sparse(m=400, d=30).tolil()
    X[:, 0] = 1e5 + np.random.default_rng(1).standard_normal((400, 1))
    X = X.tocsr()
    ours = fastdr.IncrementalPCA(n_components=3, batch_size=100).fit(X)
    theirs = skd.IncrementalPCA(n_components=3, batch_size=100).fit(X)
    _assert_same_model(ours, theirs, rtol=1e-8)


def test_one_batch_is_pca_of_a_naive_svd():
    X = _dense(m=200, d=8)
    ours = fastdr.IncrementalPCA(n_components=3, batch_size=200).fit(X)
    components, variance, _ = pca_svd(X, 3)
    signs = np.sign(np.sum(ours.components_ * components, axis=1))
    np.testing.assert_allclose(ours.components_, components * signs[:, None], atol=1e-10)
    np.testing.assert_allclose(ours.explained_variance_, variance, rtol=1e-10)


def test_partial_fit_equals_fit_on_the_same_batches():
    X = _dense()
    fitted = fastdr.IncrementalPCA(n_components=3, batch_size=100).fit(X)
    streamed = fastdr.IncrementalPCA(n_components=3)
    for start in range(0, X.shape[0], 100):
        streamed.partial_fit(X[start:start + 100])
    for name in ATTRIBUTES[:-1]:
        np.testing.assert_array_equal(getattr(streamed, name), getattr(fitted, name))


def test_float32_input_gives_float64_like_sklearn():
    X = _dense().astype(np.float32)
    ours = fastdr.IncrementalPCA(n_components=3, batch_size=100).fit(X)
    theirs = skd.IncrementalPCA(n_components=3, batch_size=100).fit(X)
    _assert_same_model(ours, theirs, rtol=1e-6)
    assert ours.transform(X).dtype == np.float64
    assert ours.inverse_transform(ours.transform(X)).dtype == np.float64


def test_rank_deficient_batches_still_give_orthonormal_components(route):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 2)) @ rng.standard_normal((2, 40))  # rank 2, k = 5
    ours = fastdr.IncrementalPCA(n_components=5, batch_size=30).fit(X)
    np.testing.assert_allclose(ours.components_ @ ours.components_.T, np.eye(5), atol=1e-8)
    theirs = skd.IncrementalPCA(n_components=5, batch_size=30).fit(X)
    # values at M's round-off: the Gram routes square them, so a zero singular value comes
    # out as at most sqrt(eps) s_1 (documented); the SVD's as eps s_1
    np.testing.assert_allclose(ours.singular_values_, theirs.singular_values_, rtol=1e-10,
                               atol=1e-7 * theirs.singular_values_[0])
    np.testing.assert_allclose(ours.transform(X), theirs.transform(X)[:, :5] * np.sign(
        np.sum(ours.components_ * theirs.components_, axis=1)), atol=1e-7)


def test_errors_name_the_problem():
    X = _dense(m=50, d=6)
    with pytest.raises(ValueError, match=re.escape("n_components=7 invalid for n_features=6")):
        fastdr.IncrementalPCA(n_components=7).fit(X)
    with pytest.raises(ValueError, match="must be less or equal to the batch number of "
                                         "samples 3 for the first partial_fit call"):
        fastdr.IncrementalPCA(n_components=4).partial_fit(X[:3])
    with pytest.raises(ValueError, match=re.escape("X has 1 sample(s) (shape (1, 6)), but "
                                                   "at least 2 are required")):
        fastdr.IncrementalPCA().partial_fit(X[:1])
    with pytest.raises(ValueError, match=re.escape("(n_samples = 1) in the first batch")):
        fastdr.IncrementalPCA(batch_size=1).fit(X)
    model = fastdr.IncrementalPCA().partial_fit(X[:10])  # n_components_ = 6
    model.set_params(n_components=4)
    with pytest.raises(ValueError, match="Number of input features has changed from 6 to 4"):
        model.partial_fit(X[:10])
    model.set_params(n_components=None)
    with pytest.raises(ValueError, match="X has 5 features, but IncrementalPCA is expecting "
                                         "6 features"):
        model.partial_fit(X[:10, :5])
    with pytest.raises(fastdr.InvalidParameterError, match="batch_size"):
        fastdr.IncrementalPCA(batch_size=0).fit(X)
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fastdr.IncrementalPCA(n_components=2).fit(bad)


def test_a_memory_map_is_fitted_in_batches(tmp_path):
    X = _dense(m=400, d=10)
    path = tmp_path / "rows.npy"
    np.save(path, X)
    mapped = np.load(path, mmap_mode="r")
    ours = fastdr.IncrementalPCA(n_components=3, batch_size=80).fit(mapped)
    theirs = skd.IncrementalPCA(n_components=3, batch_size=80).fit(X)
    _assert_same_model(ours, theirs)


@pytest.mark.parametrize("scale", [1e140, 1e-140])
def test_extreme_but_representable_scales_equal_sklearn(scale, route):
    X = _dense() * scale  # the Gram matrix would overflow (underflow) unscaled
    ours = fastdr.IncrementalPCA(n_components=3, batch_size=100).fit(X)
    theirs = skd.IncrementalPCA(n_components=3, batch_size=100).fit(X)
    _assert_same_model(ours, theirs, rtol=1e-9)


@pytest.mark.parametrize("scale, word", [(1e160, "overflow"), (1e-170, "underflow")])
def test_unrepresentable_variances_are_an_error_not_nan(scale, word):
    with pytest.raises(ValueError, match=f"The variances of X {word} float64"):
        fastdr.IncrementalPCA(n_components=2, batch_size=100).fit(_dense() * scale)


def test_a_batch_that_overflows_leaves_the_model_unchanged():
    model = fastdr.IncrementalPCA(n_components=2, batch_size=100).fit(_dense())
    before = model.components_.copy()
    with pytest.raises(ValueError, match="The variances of X overflow float64"):
        model.partial_fit(_dense(m=100) * 1e160)
    np.testing.assert_array_equal(model.components_, before)


def test_sparse_batches_narrower_than_tall_with_a_huge_mean():
    # fewer rows than features (the M M^T route) and two columns far from 0
    rng = np.random.default_rng(0)
    X = _sparse(m=200, d=300).tolil()
    X[:, 0] = 1e8 + rng.standard_normal((200, 1))
    X[:, 1] = 1e8 + 3.0 * rng.standard_normal((200, 1))
    X = X.tocsr()
    ours = fastdr.IncrementalPCA(n_components=3, batch_size=50).fit(X)
    theirs = skd.IncrementalPCA(n_components=3, batch_size=50).fit(X)
    _assert_same_model(ours, theirs, rtol=1e-6)  # scikit-learn's own digits end near here


def test_a_refused_fit_keeps_the_fitted_model_and_its_feature_names():
    import pandas as pd

    frame = pd.DataFrame(_dense(m=100, d=4), columns=list("abcd"))
    model = fastdr.IncrementalPCA(n_components=2).fit(frame)
    bad = pd.DataFrame(np.full((5, 4), np.nan), columns=list("wxyz"))
    with pytest.raises(ValueError, match="NaN"):
        model.fit(bad)
    assert list(model.feature_names_in_) == list("abcd")
