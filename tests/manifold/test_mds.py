import warnings

import numpy as np
import pytest
from sklearn.manifold import ClassicalMDS as SkClassicalMDS

from fastdr import PCA, ClassicalMDS, InvalidParameterError
from fastdr._kernels.distances.matrix_checks import symmetry_stats
from fastdr.exceptions import MemoryBudgetError

from .. import reference


def _up_to_sign(a, b, atol):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    signs = np.sign(np.sum(a * b, axis=0))
    signs[signs == 0] = 1
    np.testing.assert_allclose(a, b * signs, rtol=0, atol=atol)


def _data(rng, m=150, d=5):
    return rng.standard_normal((m, d)) * np.linspace(3.0, 0.5, d) + 1.0


@pytest.mark.parametrize("n_components", [1, 2, 4])
def test_matches_sklearn_classical_mds(rng, n_components):
    X = _data(rng)
    ours = ClassicalMDS(n_components=n_components).fit(X)
    sk = SkClassicalMDS(n_components=n_components).fit(X)
    _up_to_sign(ours.embedding_, sk.embedding_, 1e-8)
    np.testing.assert_allclose(ours.eigenvalues_, sk.eigenvalues_, rtol=1e-10)
    assert ours.n_components_ == n_components and ours.n_features_in_ == 5


def test_matches_reference_including_new_points(rng):
    X = _data(rng, m=100)
    Xn = _data(rng, m=12)
    D = np.sqrt(reference.sq_euclidean(X, X))
    Dn = np.sqrt(reference.sq_euclidean(Xn, X))
    ref_embedding, ref_new = reference.classical_mds_triangulate(D, Dn, 3)
    est = ClassicalMDS(n_components=3).fit(X)
    _up_to_sign(est.embedding_, ref_embedding, 1e-8)
    _up_to_sign(est.transform(Xn), ref_new, 1e-8)


def test_euclidean_embedding_equals_pca_scores(rng):
    X = _data(rng)
    Xn = _data(rng, m=20)
    mds = ClassicalMDS(n_components=3).fit(X)
    pca = PCA(n_components=3).fit(X)
    _up_to_sign(mds.embedding_, pca.transform(X), 1e-8)
    _up_to_sign(mds.transform(Xn), pca.transform(Xn), 1e-8)
    np.testing.assert_allclose(mds.eigenvalues_, pca.explained_variance_ * 149, rtol=1e-10)
    np.testing.assert_allclose(mds.transform(X), mds.embedding_, atol=1e-9)
    np.testing.assert_array_equal(ClassicalMDS(n_components=3).fit_transform(X), mds.embedding_)


def test_float_threshold_picks_the_same_dimension_as_pca(rng):
    X = _data(rng, d=6)
    for t in (0.5, 0.8, 0.95, 1.0):
        mds = ClassicalMDS(n_components=t).fit(X)
        assert mds.n_components_ == PCA(t=t).fit(X).n_components_  # the textbook's >= t
        _up_to_sign(mds.embedding_, PCA(n_components=mds.n_components_).fit_transform(X), 1e-8)


def test_precomputed_equals_the_euclidean_route(rng):
    X = _data(rng, m=80)
    Xn = _data(rng, m=9)
    D = np.sqrt(reference.sq_euclidean(X, X))
    Dn = np.sqrt(reference.sq_euclidean(Xn, X))
    direct = ClassicalMDS(n_components=2).fit(X)
    pre = ClassicalMDS(n_components=2, metric="precomputed").fit(D)
    np.testing.assert_allclose(pre.embedding_, direct.embedding_, atol=1e-9)
    np.testing.assert_allclose(pre.transform(Dn), direct.transform(Xn), atol=1e-9)
    assert pre.n_features_in_ == 80
    sk = SkClassicalMDS(n_components=2, metric="precomputed").fit(D)
    _up_to_sign(pre.embedding_, sk.embedding_, 1e-8)


def test_precomputed_input_is_not_modified(rng):
    X = _data(rng, m=50)
    D = np.sqrt(reference.sq_euclidean(X, X))
    before = D.copy()
    ClassicalMDS(metric="precomputed").fit(D)
    np.testing.assert_array_equal(D, before)


def test_non_euclidean_distances_warn_and_clip(rng):
    X = _data(rng, m=60, d=2)
    D = np.sqrt(np.sqrt(reference.sq_euclidean(X, X)))  # sqrt of a metric: not Euclidean...
    D[0, 1] = D[1, 0] = 25.0  # ...and a violated triangle inequality
    with pytest.warns(RuntimeWarning, match=r"The double-centred distance matrix B has \d+ "
                      r"negative eigenvalue\(s\) that are not round-off \(#\d+ = -"):
        est = ClassicalMDS(n_components=60, metric="precomputed").fit(D)
    assert (est.eigenvalues_ >= 0).all()
    assert np.isfinite(est.embedding_).all()
    assert np.isfinite(est.transform(D[:5])).all()


def test_iterative_solvers_match_dense(rng):
    X = _data(rng, m=400)
    dense = ClassicalMDS(n_components=2, eigen_solver="dense").fit(X)
    for solver in ("randomized", "arpack"):
        other = ClassicalMDS(n_components=2, eigen_solver=solver, random_state=0).fit(X)
        _up_to_sign(other.embedding_, dense.embedding_, 1e-8)
        np.testing.assert_allclose(other.eigenvalues_, dense.eigenvalues_, rtol=1e-10)


def test_same_result_for_any_n_jobs(rng):
    X = _data(rng, m=120, d=20)
    a = ClassicalMDS(n_jobs=1).fit(X)
    b = ClassicalMDS(n_jobs=None).fit(X)
    np.testing.assert_array_equal(a.embedding_, b.embedding_)


def test_float32_in_float32_out(rng):
    X = _data(rng, m=100)
    est32 = ClassicalMDS(n_components=2).fit(X.astype(np.float32))
    est64 = ClassicalMDS(n_components=2).fit(X)
    assert est32.embedding_.dtype == np.float32
    assert est32.transform(X[:5].astype(np.float32)).dtype == np.float32
    _up_to_sign(est32.embedding_, est64.embedding_, 1e-3)


def test_symmetry_stats_kernel(rng):
    A = rng.standard_normal((150, 150))
    asym, biggest, smallest = symmetry_stats(A)
    assert asym == np.abs(A - A.T).max()
    assert biggest == np.abs(A).max() and smallest == A.min()
    S = A + A.T
    assert symmetry_stats(S)[0] == 0.0


def test_bad_input(rng, monkeypatch):
    X = _data(rng, m=20)
    D = np.sqrt(reference.sq_euclidean(X, X))
    bad = X.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        ClassicalMDS().fit(bad)
    Dbad = D.copy()
    Dbad[2, 3] = np.inf
    with pytest.raises(ValueError, match="The precomputed distance matrix contains NaN or "
                       "infinity"):
        ClassicalMDS(metric="precomputed").fit(Dbad)
    with pytest.raises(ValueError, match=r"X has 1 sample\(s\).*at least 2"):
        ClassicalMDS().fit(X[:1])
    with pytest.raises(ValueError, match=r"n_components=21 is larger than allowed: "
                       r"ClassicalMDS can return at most n_samples = 20"):
        ClassicalMDS(n_components=21).fit(X)
    for t in (0.0, 2.0, None):
        with pytest.raises(InvalidParameterError,
                           match=r"^The 'n_components' parameter of ClassicalMDS must be an int "
                                 r"in the range \[1, inf\) or a float in the range \(0, 1\]\. "
                                 rf"Got {t!r} instead\.$"):
            ClassicalMDS(n_components=t).fit(X)
    with pytest.raises(ValueError, match=r"array must be 2-dimensional and square: The precomputed "
                       r"distance matrix has shape \(20, 5\)"):
        ClassicalMDS(metric="precomputed").fit(X)
    asym = D.copy()
    asym[0, 5] += 1e-3
    with pytest.raises(ValueError, match=r"Array must be symmetric: The precomputed distance "
                       r"matrix is not \(the largest asymmetry"):
        ClassicalMDS(metric="precomputed").fit(asym)
    negative = D.copy()
    negative[0, 5] = negative[5, 0] = -1.0
    with pytest.raises(ValueError, match=r"The precomputed distance matrix has a negative "
                       r"entry \(-1\); distances must be >= 0"):
        ClassicalMDS(metric="precomputed").fit(negative)
    est = ClassicalMDS().fit(X)
    with pytest.raises(ValueError, match="X has 4 features, but ClassicalMDS is expecting 5"):
        est.transform(X[:, :4])
    pre = ClassicalMDS(metric="precomputed").fit(D)
    with pytest.raises(ValueError, match=r"The precomputed distances have 19 columns, but "
                       r"ClassicalMDS was fitted on 20 samples"):
        pre.transform(D[:, :19])
    with pytest.raises(ValueError, match="The precomputed distances have a negative entry"):
        pre.transform(-D[:3])
    with pytest.raises(InvalidParameterError, match=r"The 'metric' parameter of ClassicalMDS "
                       r"must be a str among \{'minkowski', .*'precomputed'\} or a callable\. "
                       r"Got 'sokalmichener'"):
        ClassicalMDS(metric="sokalmichener").fit(X)
    with pytest.raises(InvalidParameterError, match=r"The 'eigen_solver' parameter of "
                       r"ClassicalMDS must be a str among \{'auto', 'dense', .*Got 'svd'"):
        ClassicalMDS(eigen_solver="svd").fit(X)
    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "1K")
    with pytest.raises(MemoryBudgetError, match="needs 3,200 bytes"):
        ClassicalMDS(metric="manhattan", distance_storage="stored").fit(X)
    with pytest.raises(MemoryBudgetError, match="The 20 x 20 working copy of D needs"):
        ClassicalMDS(metric="precomputed").fit(D)


def test_transform_is_silent_for_zero_eigenvalues(rng):
    X = _data(rng, m=30, d=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = ClassicalMDS(n_components=4).fit(X)
        Z = est.transform(_data(rng, m=4, d=2))
    assert np.isfinite(Z).all()
    np.testing.assert_array_equal(Z[:, 2:], 0.0)


def test_mds_keeps_its_own_copy_of_the_training_data(rng):
    X = _data(rng, m=30, d=4)
    new = _data(rng, m=5, d=4)
    est = ClassicalMDS(n_components=2).fit(X)
    before = est.transform(new)
    X *= 3.0  # the caller edits its array after fit
    np.testing.assert_array_equal(est.transform(new), before)


# --- the PCA route of Euclidean input (no m x m matrix) -------------------------------------


def _through_b(X, n_components):
    """Classical MDS through B: the precomputed Euclidean distances."""
    D = np.sqrt(reference.sq_euclidean(X, X))
    return ClassicalMDS(n_components=n_components, metric="precomputed").fit(D), D


@pytest.mark.parametrize(("m", "d", "k", "offset"), [
    (120, 5, 3, 0.0),       # m > d
    (40, 60, 4, 0.0),       # m < d: the SVD of the centred rows
    (60, 3, 5, 0.0),        # more components than features: zero coordinates past the rank
    (100, 4, 2, 1e6),       # far from the origin: the scatter must not cancel
    (90, 6, 0.9, 0.0),      # a variance threshold
])
def test_euclidean_route_equals_the_route_through_b(rng, m, d, k, offset):
    X = rng.standard_normal((m, d)) * np.linspace(3.0, 0.5, d) + offset
    Xn = rng.standard_normal((7, d)) * np.linspace(3.0, 0.5, d) + offset
    ours = ClassicalMDS(n_components=k).fit(X)
    ref, _ = _through_b(X, k)
    assert ours.n_components_ == ref.n_components_
    scale = np.sqrt(ref.eigenvalues_[0])
    _up_to_sign(ours.embedding_, ref.embedding_, 1e-9 * scale)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-9,
                               atol=1e-9 * ref.eigenvalues_[0])
    Dn = np.sqrt(reference.sq_euclidean(Xn, X))
    _up_to_sign(ours.transform(Xn), ref.transform(Dn), 1e-8 * scale)
    # the sign convention of the route through B, not only the same columns up to sign
    rows = np.argmax(np.abs(ours.embedding_), axis=0)
    nonzero = ours.eigenvalues_ > 0
    assert (ours.embedding_[rows, np.arange(ours.n_components_)][nonzero] > 0).all()


@pytest.mark.parametrize("spec", [dict(metric="l2"), dict(metric="minkowski"),
                                  dict(metric="minkowski", metric_params={"p": 2})])
def test_euclidean_names_take_the_pca_route(rng, monkeypatch, spec):
    X = _data(rng, m=400, d=4)
    expected = ClassicalMDS(n_components=2).fit(X).embedding_
    # a budget far below one 400 x 400 array: only the route without B can fit
    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "64K")
    np.testing.assert_array_equal(ClassicalMDS(n_components=2, **spec).fit(X).embedding_,
                                  expected)
    with pytest.raises(MemoryBudgetError, match="400 x 400"):
        ClassicalMDS(n_components=2, metric="minkowski", metric_params={"p": 3},
                     distance_storage="stored").fit(X)


def test_euclidean_route_float32_and_constant_data(rng):
    X = _data(rng, m=200, d=5)
    ours = ClassicalMDS(n_components=3).fit(X.astype(np.float32))
    assert ours.embedding_.dtype == np.float32 and ours.eigenvalues_.dtype == np.float32
    assert ours.transform(X[:3].astype(np.float32)).dtype == np.float32
    _up_to_sign(ours.embedding_, ClassicalMDS(n_components=3).fit(X).embedding_, 1e-4)
    flat = ClassicalMDS(n_components=2).fit(np.ones((20, 3)))
    np.testing.assert_array_equal(flat.embedding_, 0.0)
    np.testing.assert_array_equal(flat.eigenvalues_, 0.0)
    np.testing.assert_array_equal(flat.transform(np.zeros((2, 3))), 0.0)
