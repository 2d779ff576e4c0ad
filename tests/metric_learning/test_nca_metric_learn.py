"""metric-learn's NCA: its constructor, its starts and its answers (metric-learn 0.7.0 on
scikit-learn 1.7, numbers below), on fastdr's compiled NCA objective."""

import inspect

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from fastdr.metric_learning import NCA
from fastdr.metric_learning._nca_init import metric_learn_start, pca_start

# metric_learn.NCA(**params).fit(X, y): (n_iter_, components_), metric-learn 0.7.0 with
# scikit-learn 1.7.2
METRIC_LEARN = {
    "identity": (24, [
        [-5.09638959, 8.76058473, -2.09582188, -7.84525974],
        [12.7433431, -1.09716651, -13.5756278, -4.86540376],
        [-12.5400412, -16.370308, 29.3326066, 34.0074593],
        [-30.0912772, -3.71939761, 43.1315029, 31.0883407],
    ]),
    "auto2": (38, [
        [14.873089, 43.8281884, -35.6513637, -33.5582755],
        [-5.14293952, -19.6349976, 8.73022837, -13.4368341],
    ]),
    "random3": (18, [
        [15.600868, 1.19659149, -6.70640946, -8.98239397],
        [7.13295667, -23.2347759, 12.0508746, 2.87775724],
        [0.132964399, -4.36227332, 0.200209925, -10.0507756],
    ]),
    "wine_pca5": (19, [
        [0.228365118, 0.379465743, -0.103623889, -1.00739273, 0.581442353, 0.227036305,
         1.53928076, -0.163554433, 0.551486351, -0.598827088, 0.631599015, 1.28055498,
         0.895869814],
        [1.04408399, 0.794136028, 1.16822882, -0.672627861, 0.591584712, 0.23887516, -0.811934901,
         -0.0739247396, -0.41624708, 1.16275898, -1.16393926, -0.0309525066, 1.65422723],
        [-0.956798684, 0.348193577, 0.433321271, 0.536652278, 0.0616332034, 0.578826024,
         -0.0339011793, 0.731561768, 1.20627081, -0.133230183, 0.261048947, 0.261281559,
         -0.449603601],
        [0.216125584, 0.811604515, -0.271472053, 0.664072115, -0.451175423, -0.100112623,
         0.692604849, -0.368682857, 1.12369634, 0.242819385, -0.370276116, 0.220559016,
         -0.662994069],
        [-0.415367921, 0.561586148, -0.588134694, 0.462179045, 1.25416988, 0.0929475489,
         -0.135270024, -0.986520523, -0.467899074, 0.000133739727, 0.108623157, -0.19431387,
         -0.78250277],
    ]),
}
CASES = {
    "identity": ("iris", {"init": "identity"}),
    "auto2": ("iris", {"n_components": 2}),  # "auto" is "lda" here
    "random3": ("iris", {"n_components": 3, "init": "random", "random_state": 1}),
    "wine_pca5": ("wine", {"n_components": 5, "init": "pca", "random_state": 0, "max_iter": 30}),
}


def _data(name):
    if name == "iris":
        return load_iris(return_X_y=True)
    X, y = load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


def test_constructor_is_metric_learns_then_n_jobs():
    params = list(inspect.signature(NCA).parameters.values())
    assert [(p.name, p.default) for p in params if p.kind is p.POSITIONAL_OR_KEYWORD] == [
        ("init", "auto"), ("n_components", None), ("max_iter", 100), ("tol", None),
        ("verbose", False), ("preprocessor", None), ("random_state", None)]
    assert [p.name for p in params if p.kind is p.KEYWORD_ONLY] == ["n_jobs"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_equals_metric_learn(case):
    data, params = CASES[case]
    X, y = _data(data)
    nca = NCA(**params).fit(X, y)
    n_iter, components = METRIC_LEARN[case]
    components = np.asarray(components)
    # PCA and LDA starts may differ by the sign of a row; the objective is even in each row
    signs = np.sign(np.sum(nca.components_ * components, axis=1))
    assert nca.n_iter_ == n_iter
    np.testing.assert_allclose(nca.components_ * signs[:, None], components, rtol=2e-5,
                               atol=2e-5 * np.abs(components).max())


def test_preprocessor_and_threads_give_the_same_map():
    X, y = load_iris(return_X_y=True)
    plain = NCA(n_components=2, max_iter=20).fit(X, y)
    indexed = NCA(n_components=2, max_iter=20, preprocessor=X).fit(np.arange(150), y)
    np.testing.assert_array_equal(indexed.components_, plain.components_)
    for n_jobs in (1, 2):
        again = NCA(n_components=2, max_iter=20, n_jobs=n_jobs).fit(X, y)
        np.testing.assert_array_equal(again.components_, plain.components_)


def test_verbose_prints_metric_learns_table(capsys):
    X, y = load_iris(return_X_y=True)
    nca = NCA(init="identity", max_iter=3, verbose=True)
    with pytest.warns(Warning, match=r"\[NCA\] NCA did not converge"):
        nca.fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "[NCA]"
    assert lines[1].split() == ["[NCA]", "Iteration", "Objective", "Value", "Time(s)"]
    assert [line.split()[1] for line in lines[3:5]] == ["0", "1"]  # evaluations, from 0
    assert lines[-1].startswith("[NCA] Training took")


def test_bad_n_components_is_metric_learns_error():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=r"Invalid n_components, must be in \[1, 4\]"):
        NCA(n_components=5).fit(X, y)


def test_lda_start_without_lda_is_the_seeded_pca_start():
    # two classes with the same mean: no discriminant direction, so PCA's, unscaled
    Z = np.random.default_rng(0).standard_normal((40, 3))
    X, codes = np.vstack([Z, Z]), np.repeat(np.arange(2), 40)
    np.testing.assert_allclose(metric_learn_start("lda", X, codes, 1, 7, False),
                               pca_start(X, 1, 7))
