"""LMNN: the compiled loss and gradient against the triplet-by-triplet definition, the fit
against metric-learn 0.7's numbers and its optimiser written out, determinism, and errors."""

import numpy as np
import pytest

from fastdr.metric_learning import LMNN
from fastdr.metric_learning._lmnn import target_neighbours
from fastdr.metric_learning._lmnn_loss import LMNNLoss

from ..reference import learners as reference


def _small(seed=0, m=60, d=4):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), m // 3)
    X = rng.standard_normal((m, d)) + y[:, None] * np.array([1.0, 0.0, 0.5, 0.0])[:d]
    return X, y


def _centred(X):
    return np.ascontiguousarray(X - X.mean(axis=0))


@pytest.mark.parametrize("shape", [(4, 4), (2, 4)])
@pytest.mark.parametrize("reg", [0.5, 0.2])
def test_loss_gradient_equal_the_triplet_sums(shape, reg):
    X, y = _small()
    Xc = _centred(X)
    targets = target_neighbours(Xc, y.astype(np.int64), 3)
    rng = np.random.default_rng(1)
    for scale in (0.3, 1.0, 3.0):  # few, some and many active triplets
        L = scale * rng.standard_normal(shape)
        G, loss, active = LMNNLoss(Xc, y.astype(np.int64), targets, reg)(L)
        G_ref, loss_ref, active_ref = reference.lmnn_loss_gradient(Xc, L, targets, y, reg)
        assert active == active_ref > 0
        np.testing.assert_allclose(loss, loss_ref, rtol=1e-12)
        np.testing.assert_allclose(G, G_ref, rtol=1e-10, atol=1e-10 * np.abs(G_ref).max())


def test_blocks_give_the_single_block_result(monkeypatch):
    # several blocks of anchors, the last one short, against one block
    import fastdr.metric_learning._lmnn_loss as loss_module

    X, y = _small(m=90, d=3)
    Xc = _centred(X)
    codes = y.astype(np.int64)
    targets = target_neighbours(Xc, codes, 2)
    L = np.random.default_rng(2).standard_normal((3, 3))
    whole = LMNNLoss(Xc, codes, targets, 0.5)(L)
    monkeypatch.setattr(loss_module, "BLOCK_ENTRIES", 90 * 7)
    blocked = LMNNLoss(Xc, codes, targets, 0.5)(L)
    assert whole[2] == blocked[2]
    np.testing.assert_array_equal(whole[0], blocked[0])


def test_targets_are_the_nearest_points_of_the_class():
    X, y = _small()
    targets = target_neighbours(_centred(X), y.astype(np.int64), 3)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    for a in range(len(X)):
        same = np.flatnonzero((y == y[a]) & (np.arange(len(X)) != a))
        expected = same[np.argsort(D[a, same], kind="stable")[:3]]
        np.testing.assert_array_equal(targets[a], expected)


def test_fit_equals_metric_learn():
    # metric_learn.LMNN(n_neighbors=3, learn_rate=1e-3, max_iter=200).fit(X, y) on _small()
    # (metric-learn 0.7.0, scikit-learn 1.7): its components_ and n_iter_
    expected = np.array([
        [0.6994851221907332, -0.02655587693896953, -0.04147950811078531, -0.016925091682322306],
        [-0.034056467519117076, 0.6042968494999118, 0.04104089943397208, -0.023033163321908],
        [-0.048797914938255964, 0.04034584698746315, 0.6621710739121437, -0.016512256949998833],
        [-0.010376991445007006, -0.023407512910140496, -0.004705428445438093, 0.7290031792540645],
    ])
    X, y = _small()
    lmnn = LMNN(n_neighbors=3, learn_rate=1e-3, max_iter=200).fit(X, y)
    assert lmnn.n_iter_ == 51
    np.testing.assert_allclose(lmnn.components_, expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(lmnn.labels_, [0, 1, 2])


def test_fit_equals_the_written_out_optimiser():
    X, y = _small(seed=3, m=45, d=3)
    kwargs = dict(reg=0.3, learn_rate=1e-2, min_iter=5, max_iter=40, tol=1e-3)
    targets = target_neighbours(_centred(X), y.astype(np.int64), 2)
    L_ref, it_ref = reference.lmnn_fit(_centred(X), y, targets, np.eye(3), **kwargs)
    lmnn = LMNN(n_neighbors=2, regularization=0.3, learn_rate=1e-2, min_iter=5, max_iter=40,
                convergence_tol=1e-3, init="identity").fit(X, y)
    assert lmnn.n_iter_ == it_ref
    np.testing.assert_allclose(lmnn.components_, L_ref, rtol=1e-9, atol=1e-12)


def test_same_result_for_any_n_jobs():
    X, y = _small(m=300, d=4)
    fits = [LMNN(n_neighbors=3, learn_rate=1e-3, max_iter=60, n_jobs=n).fit(X, y).components_
            for n in (1, 2)]
    np.testing.assert_array_equal(fits[0], fits[1])


def test_learned_metric_helps_knn_on_noisy_features():
    from sklearn.datasets import load_iris
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    X, y = load_iris(return_X_y=True)
    X = np.hstack([X, 3.0 * np.random.default_rng(0).standard_normal((X.shape[0], 6))])
    lmnn = LMNN(n_neighbors=3, learn_rate=1e-5, max_iter=300).fit(X, y)
    plain = cross_val_score(KNeighborsClassifier(3), X, y, cv=5).mean()
    learned = cross_val_score(KNeighborsClassifier(3), lmnn.transform(X), y, cv=5).mean()
    assert learned > plain + 0.1


@pytest.mark.parametrize("init", ["auto", "pca", "lda", "identity", "random"])
def test_starts_have_the_requested_shape(init):
    X, y = _small()
    lmnn = LMNN(init=init, n_components=2, max_iter=3, random_state=0).fit(X, y)
    assert lmnn.components_.shape == (2, 4)
    assert np.isfinite(lmnn.components_).all()


def test_init_array_rows_must_equal_the_resolved_n_components():
    X, y = _small()
    with pytest.raises(ValueError, match=r"`n_components` \(4\) does not match"):
        LMNN(init=np.eye(2, 4)).fit(X, y)  # metric-learn: n_components=None means 4
    assert LMNN(init=np.eye(2, 4), n_components=2, max_iter=3).fit(X, y).components_.shape \
        == (2, 4)


def test_lda_start_beyond_the_classes_is_refused():
    # a zero row of L never moves: more LDA components than n_classes - 1 cannot learn
    X, y = _small()
    with pytest.raises(ValueError, match=r"init='lda' gives at most .* = 2 components"):
        LMNN(init="lda", n_components=3).fit(X, y)


def test_class_without_enough_points_is_named():
    X, y = _small()
    y = y.copy()
    y[:17] = 1  # class 0 keeps 3 points: at most 2 target neighbours
    with pytest.raises(ValueError, match=r"smallest class has 3.*at most 2"):
        LMNN(n_neighbors=3).fit(X, y)
    LMNN(n_neighbors=2, max_iter=3).fit(X, y)


def test_one_class_is_refused():
    X, _ = _small()
    with pytest.raises(ValueError, match="at least 2 classes"):
        LMNN().fit(X, np.zeros(len(X)))


def test_old_name_k_warns_and_is_used():
    X, y = _small()
    with pytest.warns(FutureWarning, match='"k" was renamed "n_neighbors"'):
        old = LMNN(k=2, learn_rate=1e-3, max_iter=20).fit(X, y)
    new = LMNN(n_neighbors=2, learn_rate=1e-3, max_iter=20).fit(X, y)
    np.testing.assert_array_equal(old.components_, new.components_)


def test_overflowing_step_is_an_error():
    X, y = _small()
    with pytest.raises(ValueError, match="left the float64 range"):
        LMNN(learn_rate=1e300, max_iter=5).fit(X * 1e10, y)


def test_verbose_prints_metric_learns_table(capsys):
    X, y = _small()
    LMNN(learn_rate=1e-3, max_iter=5, verbose=True).fit(X, y)
    out = capsys.readouterr().out
    assert out.startswith("iter | objective | objective difference | active constraints")
    assert "didn't converge in 5 steps" in out
