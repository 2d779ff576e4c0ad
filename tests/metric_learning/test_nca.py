import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import scipy.optimize

import fastdr
from fastdr import KNeighborsClassifier, NeighborhoodComponentsAnalysis
from fastdr._kernels.learners import nca as nca_kernels
from fastdr._runtime.progress import IterationLog
from fastdr.metric_learning._nca import nca_objective_gradient

from .. import reference

pytestmark = pytest.mark.filterwarnings("ignore::fastdr.exceptions.ConvergenceWarning")



def _invalid(param, allowed, got, est='NeighborhoodComponentsAnalysis'):
    """fastdr's parameter-validation message, word for word, as a regex."""
    return re.escape(f"The {param!r} parameter of {est} must be {allowed}. Got {got} "
                     "instead.")


def _problem(rng, m=60, d=5, r=3, n_classes=3, scale=0.7):
    X = rng.standard_normal((m, d))
    y = rng.integers(0, n_classes, m)
    A = scale * rng.standard_normal((r, d))
    return X, y, A


def _digits(n_train=300, n_test=200, seed=0):
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(seed).permutation(X.shape[0])
    tr, te = idx[:n_train], idx[n_train:n_train + n_test]
    return X[tr], y[tr], X[te], y[te]


# -- the kernel ------------------------------------------------------------------------------

@pytest.mark.parametrize("m,d,r", [(2, 1, 1), (40, 3, 2), (77, 6, 6), (150, 12, 4)])
def test_objective_and_gradient_match_naive_reference(rng, m, d, r):
    X, y, A = _problem(rng, m, d, r, n_classes=2 if m == 2 else 3)
    objective, gradient = nca_objective_gradient(X, A, y.astype(np.int64))
    ref_obj, ref_grad = reference.nca_objective_gradient(X, A, y)
    np.testing.assert_allclose(objective, ref_obj, rtol=1e-12)
    np.testing.assert_allclose(gradient, ref_grad, rtol=1e-9, atol=1e-12 * np.abs(ref_grad).max())


@pytest.mark.parametrize("block,n_chunks", [(1, 1), (7, 3), (16, 16), (64, 2), (500, 1)])
def test_blocking_and_chunking_do_not_change_the_result(rng, block, n_chunks):
    X, y, A = _problem(rng, m=97, d=8, r=5)
    codes = y.astype(np.int64)
    rows = np.arange(97, dtype=np.int64)
    n_blocks = -(-97 // block)
    n_chunks = min(n_chunks, n_blocks)
    obj, grad = nca_kernels.nca_objective_gradient(X, A, codes, rows, block, n_chunks)
    ref_obj, ref_grad = reference.nca_objective_gradient(X, A, y)
    np.testing.assert_allclose(obj, ref_obj, rtol=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-12 * np.abs(ref_grad).max())


@pytest.mark.parametrize("mode", [nca_kernels.SPARSE, nca_kernels.DENSE, nca_kernels.AUTO])
@pytest.mark.parametrize("scale", [0.2, 1.5, 6.0])
def test_sparse_and_dense_products_match_the_reference(rng, mode, scale):
    # small scales keep every pair a candidate; large ones leave a few per row
    X, y, A = _problem(rng, m=120, d=7, r=7, scale=scale)
    codes = y.astype(np.int64)
    rows = np.argsort(codes, kind="stable").astype(np.int64)
    obj, grad = nca_kernels.nca_objective_gradient(X, A, codes, rows, 16, 3, mode)
    ref_obj, ref_grad = reference.nca_objective_gradient(X, A, y)
    np.testing.assert_allclose(obj, ref_obj, rtol=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-12 * np.abs(ref_grad).max())


def test_candidates_are_the_points_within_cut_of_the_nearest():
    row = np.array([7.0, 7.0 + 41.9, np.inf, 7.0 + 42.0, 7.0 + 42.1, 3e3])
    idx = np.empty(6, dtype=np.int32)
    count = nca_kernels._candidates(row, 7.0 + nca_kernels.CUT, idx)
    assert idx[:count].tolist() == [0, 1, 3]
    # where min + CUT rounds to min, the nearest points still count (every other term is
    # then below exp(-128))
    huge = np.array([2.0**60, 2.0**60 * (1 + 2.0**-52), np.inf, 2.0**60])
    count = nca_kernels._candidates(huge, 2.0**60 + nca_kernels.CUT, idx)
    assert idx[:count].tolist() == [0, 3]


def test_very_large_projected_distances_keep_the_nearest_neighbour(rng):
    # nearest-neighbour distances of order 1e18: min + 42 rounds to min
    X, y, _ = _problem(rng, m=40, d=3, r=3)
    X = X * 1e9
    A = np.eye(3)
    objective, gradient = nca_objective_gradient(X, A, y.astype(np.int64))
    ref_obj, ref_grad = reference.nca_objective_gradient(X, A, y)
    assert objective > 0
    np.testing.assert_allclose(objective, ref_obj, rtol=1e-12)
    np.testing.assert_allclose(gradient, ref_grad, rtol=1e-8, atol=1e-10 * np.abs(ref_grad).max())


def test_mini_batch_rows_give_the_partial_objective_and_gradient(rng):
    X, y, A = _problem(rng, m=50, d=4, r=3)
    rows = np.array([3, 17, 4, 40, 22], dtype=np.int64)
    obj, grad = nca_objective_gradient(X, A, y.astype(np.int64), rows)
    # naive: the same sums restricted to rows i in the batch
    Z = X @ A.T
    ref_obj = 0.0
    inner = np.zeros((4, 4))
    for i in rows:
        dist = ((Z[i] - Z) ** 2).sum(1)
        dist[i] = np.inf
        p = np.exp(-(dist - dist.min()))
        p /= p.sum()
        same = y == y[i]
        p_i = p[same].sum()
        ref_obj += p_i
        diffs = X[i] - X
        weights = p_i * p - p * same
        inner += (diffs * weights[:, None]).T @ diffs
    np.testing.assert_allclose(obj, ref_obj, rtol=1e-12)
    np.testing.assert_allclose(grad, 2 * A @ inner, rtol=1e-9, atol=1e-12)


def test_result_is_bitwise_identical_for_any_thread_count(rng):
    X, y, A = _problem(rng, m=700, d=10, r=4)
    codes = y.astype(np.int64)
    one = nca_objective_gradient(X, A, codes, n_jobs=1)
    two = nca_objective_gradient(X, A, codes, n_jobs=2)
    assert one[0] == two[0]
    np.testing.assert_array_equal(one[1], two[1])


def test_matches_scikit_learn_loss_on_the_same_map(rng):
    from sklearn.neighbors import NeighborhoodComponentsAnalysis as SkNCA

    for m, d, r, scale in [(120, 6, 3, 0.5), (300, 10, 10, 0.3), (200, 4, 2, 3.0)]:
        X, y, A = _problem(rng, m, d, r, n_classes=4, scale=scale)
        sk = SkNCA()
        sk.n_iter_, sk.verbose = 1, 0
        loss, grad = sk._loss_grad_lbfgs(A.ravel(), X, y[:, None] == y[None, :])
        objective, gradient = nca_objective_gradient(X, A, y.astype(np.int64))
        assert abs(objective - loss) <= 1e-8 * abs(loss)
        assert np.abs(gradient.ravel() - grad).max() <= 1e-8 * np.abs(grad).max()


def test_gradient_agrees_with_finite_differences(rng):
    X, y, A = _problem(rng, m=45, d=4, r=3)
    codes = y.astype(np.int64)

    def f(a):
        return nca_objective_gradient(X, a.reshape(3, 4), codes)[0]

    def g(a):
        return nca_objective_gradient(X, a.reshape(3, 4), codes)[1].ravel()

    error = scipy.optimize.check_grad(f, g, A.ravel(), epsilon=1e-7)
    assert error < 1e-5 * max(1.0, np.linalg.norm(g(A.ravel())))


def test_far_apart_points_do_not_underflow_the_softmax(rng):
    # projected distances of order 1e5: exp(-d) underflows unless the softmax is shifted
    X, y, A = _problem(rng, m=30, d=3, r=3, scale=300.0)
    objective, gradient = nca_objective_gradient(X, A, y.astype(np.int64))
    ref_obj, ref_grad = reference.nca_objective_gradient(X, A, y)
    assert np.isfinite(objective) and np.isfinite(gradient).all()
    np.testing.assert_allclose(objective, ref_obj, rtol=1e-12)
    np.testing.assert_allclose(gradient, ref_grad, rtol=1e-8, atol=1e-10 * np.abs(ref_grad).max())


def test_vectorised_exp_matches_numpy_and_underflows_to_zero():
    values = np.concatenate([np.linspace(0, 750, 200001), [0.0, 1e-300, 708.0, 708.5, 1e6]])
    out = np.empty_like(values)
    scratch = np.empty_like(values)
    nca_kernels.exp_shifted(values, 0.0, out, scratch)
    expected = np.exp(-values)
    kept = values <= 708.0
    np.testing.assert_allclose(out[kept], expected[kept], rtol=2e-15, atol=0)
    assert (out[~kept] == 0).all()
    shifted = np.empty_like(values)
    nca_kernels.exp_shifted(values + 5.0, 5.0, shifted, scratch)
    np.testing.assert_allclose(shifted[kept], expected[kept], rtol=1e-12, atol=0)


@pytest.mark.jit_only
def test_memory_stays_linear_in_m():
    # m = 20,000: an m x m float64 array alone would take 3.2 GB
    code = textwrap.dedent("""
        import resource
        import numpy as np
        from fastdr.metric_learning._nca import nca_objective_gradient
        rng = np.random.default_rng(0)
        m = 20000
        X = rng.standard_normal((m, 3))
        y = rng.integers(0, 3, m).astype(np.int64)
        nca_objective_gradient(X[:50], np.eye(2, 3), y[:50])
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        objective, gradient = nca_objective_gradient(X, np.eye(2, 3), y)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert np.isfinite(objective) and np.isfinite(gradient).all()
        print((after - before) * 1024)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    grown = int(out.stdout.strip().splitlines()[-1])
    assert grown < 400 * 2**20


# -- the estimator ---------------------------------------------------------------------------

def test_nca_improves_knn_over_euclidean_on_noisy_features(rng):
    # two informative features, eight of large-variance noise
    m = 300
    y = rng.integers(0, 3, m)
    informative = np.column_stack([np.cos(2 * y), np.sin(2 * y)]) * 2.0
    X = np.hstack([informative + 0.3 * rng.standard_normal((m, 2)),
                   5.0 * rng.standard_normal((m, 8))])
    tr, te = slice(0, 200), slice(200, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastdr.ConvergenceWarning)
        nca = NeighborhoodComponentsAnalysis(n_components=2, max_iter=30).fit(X[tr], y[tr])
    euclid = KNeighborsClassifier(n_neighbors=3).fit(X[tr], y[tr]).score(X[te], y[te])
    learned = KNeighborsClassifier(n_neighbors=3, metric=nca).fit(X[tr], y[tr]).score(X[te],
                                                                                      y[te])
    assert learned > euclid + 0.1


def test_objective_increases_and_attributes_are_set(rng):
    X, y, _ = _problem(rng, m=120, d=6)
    A0 = np.eye(6)
    start = nca_objective_gradient(X, A0, y.astype(np.int64))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastdr.ConvergenceWarning)
        nca = NeighborhoodComponentsAnalysis(init="identity", max_iter=20).fit(X, y)
    assert nca.objective_ > start
    assert 1 <= nca.n_iter_ <= 20
    assert nca.n_features_in_ == 6
    np.testing.assert_array_equal(nca.classes_, np.unique(y))
    np.testing.assert_allclose(nca.objective_,
                               nca_objective_gradient(X, nca.components_, y.astype(np.int64))[0],
                               rtol=1e-12)
    M = nca.get_mahalanobis_matrix()
    np.testing.assert_allclose(M, nca.components_.T @ nca.components_)


def test_knn_with_metric_learner_equals_knn_on_transformed_data(rng):
    X, y, _ = _problem(rng, m=150, d=5)
    nca = NeighborhoodComponentsAnalysis(n_components=3, max_iter=5).fit(X, y)
    Q = rng.standard_normal((40, 5))
    direct = KNeighborsClassifier(n_neighbors=4, metric=nca).fit(X, y).predict(Q)
    mapped = KNeighborsClassifier(n_neighbors=4).fit(nca.transform(X), y).predict(nca.transform(Q))
    np.testing.assert_array_equal(direct, mapped)
    via_params = KNeighborsClassifier(
        n_neighbors=4, metric="mahalanobis",
        metric_params={"M": nca.get_mahalanobis_matrix()}).fit(X, y).predict(Q)
    np.testing.assert_array_equal(direct, via_params)


@pytest.mark.jit_only  # interpreted, prange is range: one thread, nothing to compare
def test_same_result_for_any_n_jobs(rng):
    X, y, _ = _problem(rng, m=300, d=6)
    fits = [NeighborhoodComponentsAnalysis(max_iter=6, n_jobs=n, init="pca").fit(X, y)
            for n in (1, 2)]
    np.testing.assert_array_equal(fits[0].components_, fits[1].components_)


@pytest.mark.parametrize("init,r", [("identity", 4), ("random", 3), ("pca", 2), ("lda", 2),
                                    ("auto", 2), ("auto", 5), ("auto", None)])
def test_initialisations(rng, init, r):
    X, y, _ = _problem(rng, m=90, d=6)
    nca = NeighborhoodComponentsAnalysis(n_components=r, init=init, max_iter=1,
                                         random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastdr.ConvergenceWarning)
        nca.fit(X, y)
    assert nca.components_.shape == (r or 6, 6)
    assert np.isfinite(nca.components_).all()


def test_array_init_is_the_starting_point(rng):
    X, y, _ = _problem(rng, m=80, d=4)
    A0 = rng.standard_normal((2, 4))
    seen = []
    nca = NeighborhoodComponentsAnalysis(init=A0, max_iter=3,
                                         callback=lambda A, k: seen.append((A.copy(), k)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastdr.ConvergenceWarning)
        nca.fit(X, y)
    assert [k for _, k in seen] == list(range(1, nca.n_iter_ + 1))
    # scikit-learn hands the callback the flattened map
    assert all(A.shape == (8,) for A, _ in seen)
    np.testing.assert_array_equal(seen[-1][0].reshape(2, 4), nca.components_)
    start = nca_objective_gradient(X, A0, y.astype(np.int64))[0]
    assert nca.objective_ >= start


def test_sgd_ascends_and_is_reproducible(rng):
    X, y, _ = _problem(rng, m=200, d=5)
    start = nca_objective_gradient(X, np.eye(5), y.astype(np.int64))[0]
    fits = []
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fastdr.ConvergenceWarning)
            fits.append(NeighborhoodComponentsAnalysis(
                optimizer="sgd", init="identity", batch_size=32, max_iter=15,
                random_state=3).fit(X, y))
    assert fits[0].objective_ > start
    np.testing.assert_array_equal(fits[0].components_, fits[1].components_)
    assert fits[0].n_iter_ <= 15
    fixed = NeighborhoodComponentsAnalysis(optimizer="sgd", init="identity", learning_rate=1e-3,
                                           max_iter=3, random_state=0, tol=1.0).fit(X, y)
    assert fixed.n_iter_ <= 3 and np.isfinite(fixed.objective_)


def test_non_convergence_warns_when_verbose_as_scikit_learn_does(capsys):
    X, y, _, _ = _digits(n_train=120, n_test=1)
    with pytest.warns(fastdr.ConvergenceWarning,
                      match=r"\[NeighborhoodComponentsAnalysis\] NCA did not converge: STOP: "
                            r"TOTAL NO\. OF ITERATIONS REACHED LIMIT\. Increase max_iter, or "
                            r"loosen tol\."):
        NeighborhoodComponentsAnalysis(n_components=3, init="pca", max_iter=1,
                                       verbose=1).fit(X, y)
    # scikit-learn's NCA is silent about it unless verbose; so is fastdr's
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        NeighborhoodComponentsAnalysis(n_components=3, init="pca", max_iter=1).fit(X, y)


def test_verbose_prints_one_line_per_iteration_and_a_progress_bar(rng, capsys, monkeypatch):
    X, y, _ = _problem(rng, m=80, d=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastdr.ConvergenceWarning)
        nca = NeighborhoodComponentsAnalysis(max_iter=4, verbose=1).fit(X, y)
    out = capsys.readouterr()
    lines = [line for line in out.out.splitlines()
             if line.startswith("[NeighborhoodComponentsAnalysis]")]
    assert lines[0] == "[NeighborhoodComponentsAnalysis]"
    assert "Objective Value" in lines[1]
    iteration_lines = [line for line in lines[1:] if line.split()[1].isdigit()]
    # one line per evaluation, numbered by the iteration it belongs to
    assert sorted({int(line.split()[1]) for line in iteration_lines}) == list(
        range(1, nca.n_iter_ + 1))
    assert re.fullmatch(r"\[NeighborhoodComponentsAnalysis\] Training took +\d+\.\d\ds\.",
                        lines[-1])
    assert out.err == ""

    monkeypatch.setattr(IterationLog, "long_run_s", 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fastdr.ConvergenceWarning)
        NeighborhoodComponentsAnalysis(max_iter=3, init="identity", verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "|#" in err and "iterations" in err and err.endswith("\n")


def test_float32_input_gives_float32_transform(rng):
    X, y, _ = _problem(rng, m=80, d=4)
    nca = NeighborhoodComponentsAnalysis(n_components=2, max_iter=3).fit(X.astype(np.float32), y)
    assert nca.transform(X.astype(np.float32)).dtype == np.float32
    assert nca.transform(X).dtype == np.float64


# -- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_input_is_rejected(rng, bad):
    X, y, _ = _problem(rng)
    X[3, 1] = bad
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        NeighborhoodComponentsAnalysis().fit(X, y)


def test_single_class_returns_the_initial_map_as_scikit_learn(rng):
    # one class: every point's neighbours share its class, the objective is constant and its
    # gradient zero, so the fit stops at the start (scikit-learn's test_one_class)
    X, _, _ = _problem(rng)
    est = NeighborhoodComponentsAnalysis(init="identity").fit(X, np.ones(X.shape[0]))
    np.testing.assert_array_equal(est.transform(X), X)
    assert est.n_iter_ == 0


def test_n_components_larger_than_d_is_rejected(rng):
    X, y, _ = _problem(rng, d=5)
    with pytest.raises(ValueError, match=re.escape(
            "The preferred dimensionality of the projected space `n_components` (6) cannot be "
            "greater than the given data dimensionality (5)! Pass n_components <= 5.")):
        NeighborhoodComponentsAnalysis(n_components=6).fit(X, y)


@pytest.mark.parametrize("params,error,match", [
    ({"init": "svd"}, ValueError, _invalid('init',
                                           "a str among {'auto', 'pca', 'lda', "
                                           "'identity', 'random'}"
                                           " or an array-like",
                                           "'svd'")),
    ({"optimizer": "adam"}, ValueError, _invalid('optimizer',
                                                 "a str among {'lbfgs', 'sgd'}",
                                                 "'adam'")),
    ({"max_iter": 0}, ValueError, _invalid('max_iter', 'an int in the range [1, inf)', '0')),
    ({"tol": -1.0}, ValueError, _invalid('tol', 'a float in the range [0, inf)', '-1.0')),
    ({"batch_size": 0}, ValueError, _invalid('batch_size',
                                             'an int in the range [1, inf) or None',
                                             '0')),
    ({"learning_rate": 0.0}, ValueError, _invalid('learning_rate',
                                                  'a float in the range (0, inf) or None',
                                                  '0.0')),
    ({"callback": 3}, ValueError, _invalid('callback', 'a callable or None', '3')),
    ({"init": np.eye(3, 4)}, ValueError, re.escape(
        "The input dimensionality (4) of the given linear transformation `init` must match "
        "the dimensionality of the given inputs `X` (5).\nPass an init of shape")),
    ({"init": np.eye(3, 5), "n_components": 2}, ValueError, re.escape(
        "`n_components` (2) does not match the output dimensionality of the given linear "
        "transformation `init` (3)!\nPass an init of shape (2, 5) or n_components=None.")),
    ({"init": np.eye(6, 6)}, ValueError, re.escape(
        "The input dimensionality (6) of the given linear transformation `init` must match")),
    ({"init": np.eye(6, 5)}, ValueError, re.escape(
        "The output dimensionality (6) of the given linear transformation `init` cannot be "
        "greater than its input dimensionality (5).\nPass at most 5 rows.")),
    ({"init": "lda", "n_components": 3}, ValueError, re.escape(
        "init='lda' with n_components=3: n_components cannot be larger than "
        "min(n_features, n_classes - 1) = 2. Pass n_components <= 2, or init='auto'.")),
    ({"warm_start": "yes"}, ValueError, _invalid('warm_start', 'a bool', "'yes'")),
])
def test_bad_parameters(rng, params, error, match):
    X, y, _ = _problem(rng, d=5)
    with pytest.raises(error, match=match):
        NeighborhoodComponentsAnalysis(**params).fit(X, y)


def test_transform_checks_fitted_and_feature_count(rng):
    X, y, _ = _problem(rng, d=5)
    with pytest.raises(fastdr.NotFittedError, match="not fitted yet"):
        NeighborhoodComponentsAnalysis().transform(X)
    nca = NeighborhoodComponentsAnalysis(max_iter=2).fit(X, y)
    with pytest.raises(ValueError, match="X has 4 features, but NeighborhoodComponentsAnalysis "
                                         "is expecting 5"):
        nca.transform(X[:, :4])


# -- BLAS threads ----------------------------------------------------------------------------

def test_blas_is_single_threaded_inside_and_restored_after():
    import threadpoolctl

    from fastdr._runtime.blas import single_threaded_blas

    def counts():
        return [info["num_threads"] for info in threadpoolctl.threadpool_info()
                if info["internal_api"] == "openblas"]

    import scipy.linalg  # noqa: F401  (loads scipy's BLAS too, when it ships its own)

    assert counts(), (
        "no OpenBLAS is loaded, so this test cannot check anything: the numpy and scipy "
        f"wheels ship OpenBLAS; found {threadpoolctl.threadpool_info()}. On a platform with "
        "another BLAS, extend this test to that BLAS."
    )
    # start from two threads, so that one thread inside is a change the test can see
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = counts()
        assert set(before) == {2}
        with single_threaded_blas():
            with single_threaded_blas():
                assert set(counts()) == {1}
            assert set(counts()) == {1}
        assert counts() == before


@pytest.mark.jit_only  # interpreted, prange is range: one thread, nothing to compare
def test_learners_run_concurrently_from_python_threads(rng):
    import threading

    X, y, _ = _problem(rng, m=300, d=6)
    results = {}

    def nca():
        results["nca"] = NeighborhoodComponentsAnalysis(max_iter=5, init="identity").fit(X, y)

    def mmc():
        results["mmc"] = fastdr.MMC_Supervised(max_iter=20, random_state=0).fit(X, y)

    threads = [threading.Thread(target=f) for f in (nca, mmc, nca)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    assert np.isfinite(results["nca"].components_).all()
    assert np.isfinite(results["mmc"].components_).all()
