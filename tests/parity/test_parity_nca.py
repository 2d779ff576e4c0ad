"""NeighborhoodComponentsAnalysis against scikit-learn's on the same data: the learned map,
k-NN accuracy, the callback, warm starts, verbose output, random_state_ and feature names."""

import re

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
from sklearn.neighbors import NeighborhoodComponentsAnalysis as SkNCA

import fastdr
from fastdr import KNeighborsClassifier, NeighborhoodComponentsAnalysis

pytestmark = [pytest.mark.filterwarnings("ignore::fastdr.exceptions.ConvergenceWarning"),
              pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")]


def _data(m=60, d=5, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, d))
    y = rng.integers(0, n_classes, m)
    return X, y


def _same_up_to_row_signs(ours, theirs):
    """Rows of ``ours`` flipped to agree with ``theirs`` (NCA's objective and L-BFGS are
    unchanged by flipping rows of the map, and PCA/LDA fix signs by different rules)."""
    signs = np.where(np.sum(ours * theirs, axis=1) < 0, -1.0, 1.0)
    return ours * signs[:, None]


@pytest.mark.parametrize("init,n_components", [
    ("identity", 3), ("random", 3), ("pca", 3), ("lda", 2), ("auto", 2), ("auto", 4),
    ("auto", None), ("array", None), ("array", 2),
])
def test_components_equal_scikit_learn_from_the_same_init(init, n_components):
    X, y = _data()
    if init == "array":
        init = np.random.default_rng(5).standard_normal((n_components or 5, 5))
    ours = NeighborhoodComponentsAnalysis(n_components, init=init, max_iter=10,
                                          random_state=1).fit(X, y)
    theirs = SkNCA(n_components, init=init, max_iter=10, random_state=1).fit(X, y)
    assert ours.components_.shape == theirs.components_.shape
    np.testing.assert_allclose(_same_up_to_row_signs(ours.components_, theirs.components_),
                               theirs.components_, rtol=1e-8, atol=1e-10)
    # scikit-learn's n_iter_ also counts its first objective evaluation
    assert ours.n_iter_ == theirs.n_iter_ - 1


def test_fit_matches_scikit_learn_and_knn_accuracy_is_as_good():
    from sklearn.datasets import load_digits
    from sklearn.neighbors import KNeighborsClassifier as SkKNN

    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(0).permutation(X.shape[0])
    X, y, X_test, y_test = X[idx[:300]], y[idx[:300]], X[idx[300:500]], y[idx[300:500]]
    ours = NeighborhoodComponentsAnalysis(n_components=10, max_iter=8, random_state=0)
    ours.fit(X, y)
    sk = SkNCA(n_components=10, max_iter=8, random_state=0).fit(X, y)
    ours_acc = KNeighborsClassifier(n_neighbors=3, metric=ours).fit(X, y).score(X_test, y_test)
    sk_acc = SkKNN(n_neighbors=3).fit(sk.transform(X), y).score(sk.transform(X_test), y_test)
    assert ours_acc >= sk_acc
    sk_objective = -sk._loss_grad_lbfgs(sk.components_.ravel(), X, y[:, None] == y[None, :],
                                        -1.0)[0]
    assert ours.objective_ >= sk_objective * (1 - 1e-6)
    assert ours.components_.shape == (10, 64)


def test_callback_is_called_as_scikit_learn_calls_it():
    X, y = _data()
    ours_calls, theirs_calls = [], []
    ours = NeighborhoodComponentsAnalysis(
        2, init="identity", max_iter=6,
        callback=lambda t, k: ours_calls.append((t.copy(), k))).fit(X, y)
    SkNCA(2, init="identity", max_iter=6,
          callback=lambda t, k: theirs_calls.append((t.copy(), k))).fit(X, y)
    assert len(ours_calls) == len(theirs_calls) == ours.n_iter_ == 6
    assert [k for _, k in ours_calls] == [k for _, k in theirs_calls] == [1, 2, 3, 4, 5, 6]
    for (ours_t, _), (theirs_t, _) in zip(ours_calls, theirs_calls, strict=True):
        assert ours_t.shape == theirs_t.shape == (10,)
        np.testing.assert_allclose(ours_t, theirs_t, rtol=1e-8, atol=1e-10)


def test_sgd_callback_gets_the_flattened_map_per_epoch():
    X, y = _data()
    calls = []
    nca = NeighborhoodComponentsAnalysis(2, init="identity", optimizer="sgd", max_iter=3,
                                         tol=0.0, random_state=0,
                                         callback=lambda t, k: calls.append((t.copy(), k)))
    nca.fit(X, y)
    assert [k for _, k in calls] == [1, 2, 3]
    np.testing.assert_array_equal(calls[-1][0], nca.components_.ravel())


def test_warm_start_continues_from_the_previous_components():
    X, y = _data()
    ours = NeighborhoodComponentsAnalysis(2, init="pca", max_iter=3, warm_start=True)
    theirs = SkNCA(2, init="pca", max_iter=3, warm_start=True)
    first = ours.fit(X, y).components_.copy()
    theirs.fit(X, y)
    # a warm start ignores n_components and init
    ours.set_params(n_components=4, init="random")
    theirs.set_params(n_components=4, init="random")
    second = ours.fit(X, y).components_
    theirs.fit(X, y)
    assert second.shape == (2, 5)
    np.testing.assert_allclose(_same_up_to_row_signs(second, theirs.components_),
                               theirs.components_, rtol=1e-8, atol=1e-10)
    # the same as a cold fit started from the first fit's map, and not the first map itself
    cold = NeighborhoodComponentsAnalysis(init=first, max_iter=3).fit(X, y)
    np.testing.assert_allclose(second, cold.components_, rtol=1e-12, atol=1e-14)
    assert not np.allclose(second, first)
    # without warm_start the next fit starts afresh
    ours.set_params(warm_start=False, n_components=2, init="pca")
    np.testing.assert_allclose(ours.fit(X, y).components_, first, rtol=1e-12, atol=1e-14)


def test_warm_start_on_other_features_is_refused_with_scikit_learns_phrase():
    X, y = _data()
    nca = NeighborhoodComponentsAnalysis(max_iter=2, warm_start=True).fit(X, y)
    with pytest.raises(ValueError, match=re.escape(
            "The new inputs dimensionality (4) does not match the input dimensionality of the "
            "previously learned transformation (5). Fit on X with 5 features, or set "
            "warm_start=False.")):
        nca.fit(X[:, :4], y)


def _lines(text):
    return [line for line in text.splitlines() if line]


@pytest.mark.parametrize("init", ["identity", "pca", "lda"])
def test_verbose_output_has_scikit_learns_lines(init, capsys):
    X, y = _data()
    ours = NeighborhoodComponentsAnalysis(2, init=init, max_iter=4, verbose=1)
    with pytest.warns(fastdr.ConvergenceWarning, match="NCA did not converge: "):
        ours.fit(X, y)
    ours_out = _lines(capsys.readouterr().out)
    with pytest.warns(SkConvergenceWarning, match="NCA did not converge: "):
        SkNCA(2, init=init, max_iter=4, verbose=1).fit(X, y)
    theirs_out = _lines(capsys.readouterr().out)
    assert len(ours_out) == len(theirs_out)
    timing = re.compile(r"\d+\.\d\d")
    for ours_line, theirs_line in zip(ours_out, theirs_out, strict=True):
        # the same words and the same layout; the times differ, and the objective values
        # are compared as numbers
        assert timing.sub("T", ours_line).split()[:2] == timing.sub("T", theirs_line).split()[:2]
        assert len(ours_line) == len(theirs_line), (ours_line, theirs_line)
        fields = theirs_line.split()
        if len(fields) == 4 and fields[1].isdigit():
            np.testing.assert_allclose(float(ours_line.split()[2]), float(fields[2]),
                                       rtol=1e-6)
    assert ours_out[-1].startswith("[NeighborhoodComponentsAnalysis] Training took ")


def test_random_state_and_feature_names_are_scikit_learns():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)])
    ours = NeighborhoodComponentsAnalysis(3, init="random", max_iter=2, random_state=7)
    theirs = SkNCA(3, init="random", max_iter=2, random_state=7)
    ours.fit(frame, y)
    theirs.fit(frame, y)
    assert isinstance(ours.random_state_, np.random.RandomState)
    np.testing.assert_array_equal(ours.random_state_.standard_normal(4),
                                  theirs.random_state_.standard_normal(4))
    np.testing.assert_array_equal(ours.feature_names_in_, theirs.feature_names_in_)
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())
    assert ours.n_features_in_ == theirs.n_features_in_ == 5
    ours.fit(X, y)
    assert not hasattr(ours, "feature_names_in_")


def test_n_components_is_positional_and_the_rest_keyword_only():
    assert NeighborhoodComponentsAnalysis(3).n_components == 3
    with pytest.raises(TypeError):
        NeighborhoodComponentsAnalysis(3, "pca")


def test_tags_say_fit_needs_y_as_scikit_learns_do():
    ours = NeighborhoodComponentsAnalysis().__sklearn_tags__()
    theirs = SkNCA().__sklearn_tags__()
    assert ours.target_tags.required is theirs.target_tags.required is True
    assert ours.transformer_tags is not None and theirs.transformer_tags is not None
