"""SCML and SCML_Supervised: metric-learn 0.7's numbers, naive references of the triplets and
of the solver, the bases, the classifier of triplets, and every error path.

The expected matrices were computed with metric-learn 0.7.0 (scikit-learn 1.7.2) in its own
environment, on the inputs built here (numpy's legacy RandomState streams do not change
between versions), and printed with full precision."""

import inspect
import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import NotFittedError

from fastdr.metric_learning import SCML, SCML_Supervised
from fastdr.metric_learning._scml_bases import lda_basis, triplet_diffs_basis

from ..reference import learners as reference

# metric_learn/scml.py at 0.7.0, in order, with the defaults
METRIC_LEARN_SCML = [("beta", 1e-5), ("basis", "triplet_diffs"), ("n_basis", None),
                     ("gamma", 5e-3), ("max_iter", 10000), ("output_iter", 500),
                     ("batch_size", 10), ("verbose", False), ("preprocessor", None),
                     ("random_state", None)]
METRIC_LEARN_SUPERVISED = [("k_genuine", 3), ("k_impostor", 10), ("beta", 1e-5),
                           ("basis", "lda")] + METRIC_LEARN_SCML[2:]
LINE = np.array([[0, 0], [1, 1], [2, 2], [3, 3]])  # metric-learn's toy points on a line
LINE_TRIPLETS = np.array([[0, 1, 2], [0, 1, 3], [1, 0, 2], [1, 0, 3], [2, 3, 1], [2, 3, 0],
                          [3, 2, 1], [3, 2, 0]])
SQUARE = np.array([[[0, 1], [2, 1], [0, 0]], [[2, 1], [0, 1], [2, 0]],
                   [[0, 0], [2, 0], [0, 1]], [[2, 0], [0, 0], [2, 1]]])


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "As no value for `n_basis`")
        warnings.filterwarnings("ignore", "The classes .* have too few points")
        yield


def classes_data(seed=1, shift=2.0):
    """30 tie-free points of three shifted Gaussian classes."""
    y = np.repeat([0, 1, 2], 10)
    return np.random.RandomState(seed).randn(30, 3) + shift * y[:, None], y


def solver_problem():
    """12 points of three classes, 58 triplets (a, same class, other class), 6 unit bases."""
    rs = np.random.RandomState(0)
    X = rs.randn(12, 3)
    rs.randint(0, 12, size=(20, 3))
    B = rs.randn(6, 3)
    B /= np.linalg.norm(B, axis=1, keepdims=True)
    lab = np.repeat([0, 1, 2], 4)
    X = X + 2.0 * lab[:, None]
    T = np.array([[a, b, c] for a in range(12) for b in range(12) for c in range(12)
                  if a != b and lab[a] == lab[b] and lab[c] != lab[a]])[::5]
    return X, T, B


def metric(model):
    return model.components_.T @ model.components_


@pytest.mark.parametrize("cls,expected", [(SCML, METRIC_LEARN_SCML),
                                          (SCML_Supervised, METRIC_LEARN_SUPERVISED)])
def test_constructor_is_metric_learns(cls, expected):
    params = [p for p in inspect.signature(cls).parameters.values()
              if p.kind != p.KEYWORD_ONLY]  # fastdr's extras (n_jobs) are keyword-only
    assert [(p.name, p.default) for p in params] == expected


def test_solver_gives_metric_learns_metric():
    # metric-learn: SCML(random_state=1, max_iter=200, output_iter=50, batch_size=3,
    # beta=1e-3)._fit(X[T], B, 6) (its public fit fails on a basis array)
    X, T, B = solver_problem()
    expected = np.array([[7.0494338342099025, 3.065297204038382, 4.78561432911779],
                         [3.065297204038382, 15.937329533487159, -3.356505232391855],
                         [4.78561432911779, -3.356505232391855, 8.907560054526162]])
    model = SCML(basis=B, random_state=1, max_iter=200, output_iter=50, batch_size=3,
                 beta=1e-3).fit(X[T])
    np.testing.assert_allclose(metric(model), expected, rtol=1e-12)
    assert model.n_iter_ == 200


def test_solver_is_the_naive_solver():
    X, T, B = solver_problem()
    draws = np.random.RandomState(5).randint(0, T.shape[0], size=(300, 4))
    w, _ = reference.scml_weights(X, T, B, draws, 1e-4, 1.0, 30)
    model = SCML(basis=B, random_state=5, max_iter=300, output_iter=30, batch_size=4,
                 beta=1e-4, gamma=1.0).fit(X[T])
    assert (w > 0).sum() == 3  # more than one basis with weight
    np.testing.assert_allclose(metric(model), (B.T * w) @ B, rtol=1e-10, atol=1e-12)


def test_supervised_lda_gives_metric_learns_metric():
    # metric-learn: SCML_Supervised(n_basis=12, random_state=0, max_iter=300,
    # output_iter=100, k_genuine=2, k_impostor=3).fit(X, y)
    X, y = classes_data()
    expected = np.array([[0.3962104278011527, 0.8581435597275944, 0.5961025056745386],
                         [0.8581435597275944, 1.8586344967970705, 1.291085469458709],
                         [0.5961025056745386, 1.291085469458709, 0.8968421130243398]])
    model = SCML_Supervised(n_basis=12, random_state=0, max_iter=300, output_iter=100,
                            k_genuine=2, k_impostor=3).fit(X, y)
    np.testing.assert_allclose(metric(model), expected, rtol=1e-10)
    np.testing.assert_array_equal(model.triplets_, reference.scml_knn_triplets(X, y, 2, 3))


@pytest.mark.parametrize("cls,data", [(SCML, (LINE_TRIPLETS,)),
                                      (SCML_Supervised, (np.arange(4), np.array([0, 0, 1, 1])))])
def test_verbose_is_metric_learns(cls, data, capsys):
    model = cls(preprocessor=LINE, max_iter=1, output_iter=1, batch_size=1,
                basis="triplet_diffs", random_state=42, verbose=True)
    model.fit(*data)
    assert capsys.readouterr().out == (f"[{cls.__name__}] iter 1\t obj 0.569946\t num_imp 2\n"
                                       "max iteration reached.\n")


def test_knn_triplets_unlabelled_and_small_classes():
    X, y = classes_data(seed=3)
    y = y.copy()
    y[[0, 15]] = -1  # unlabelled: in no triplet
    y[20:] = np.r_[2, 2, np.full(8, 3)]  # a class of two points: one genuine neighbour
    with pytest.warns(UserWarning, match=r"too few points for k_genuine=3; they use \[1\]"):
        model = SCML_Supervised(n_basis=6, max_iter=20, output_iter=10, random_state=0)
        model.fit(X, y)
    keep = np.flatnonzero(y >= 0)
    np.testing.assert_array_equal(model.triplets_,
                                  keep[reference.scml_knn_triplets(X[keep], y[keep], 3, 10)])


def test_triplet_diffs_bases_are_eigenvectors():
    # metric-learn takes the eigenvector matrix's rows; the bases are its columns
    X, T, _ = solver_problem()
    basis = triplet_diffs_basis(X, T, 3, np.random.RandomState(0))
    pick = T[np.random.RandomState(0).choice(T.shape[0], size=3, replace=False)]
    pos, neg = X[pick[:, 0]] - X[pick[:, 1]], X[pick[:, 0]] - X[pick[:, 2]]
    S = pos.T @ pos - neg.T @ neg
    values = np.einsum("ij,jk,ik->i", basis, S, basis)
    np.testing.assert_allclose(basis @ S, values[:, None] * basis, atol=1e-10)
    np.testing.assert_array_equal(np.argsort(np.abs(values)), np.arange(3))
    # points on a line: the one direction, every round (metric-learn's toy test)
    line = triplet_diffs_basis(LINE.astype(float), LINE_TRIPLETS, 10, np.random.RandomState(0))
    np.testing.assert_allclose(np.abs(line), np.full((10, 2), 1 / np.sqrt(2)))


def test_lda_basis_toy_and_default_sizes():
    basis = lda_basis(LINE.astype(float), np.array([0, 0, 1, 1]), 7, np.random.RandomState(0),
                      None)
    np.testing.assert_allclose(np.abs(basis), np.full((7, 2), 1 / np.sqrt(2)))
    X, y = classes_data()
    with pytest.warns(UserWarning, match="n_basis= 29"):  # min(20 d, 2 n (c - 1) - 1)
        SCML_Supervised(max_iter=10, output_iter=10, random_state=0).fit(X[:15], y[:15])
    with pytest.warns(UserWarning, match="n_basis= 240"):  # 80 d
        X3, T, _ = solver_problem()
        SCML(max_iter=10, output_iter=10, random_state=0).fit(X3[T])


def test_dimension_reduction_and_zero_weights_warn():
    with pytest.warns(UserWarning, match="reduces the dimension to 1"):
        model = SCML(n_basis=2, random_state=0).fit(SQUARE)
    assert model.components_.shape == (1, 2)
    X, T, B = solver_problem()
    with pytest.warns(UserWarning, match="Every basis weight is zero"):
        model = SCML(basis=B, beta=1e6, max_iter=20, output_iter=10).fit(X[T])
    np.testing.assert_array_equal(model.components_, np.zeros((1, 3)))


def test_supervised_separates_iris_and_honours_gamma():
    # metric-learn's test_iris: the learned metric separates the classes
    X, y = load_iris(return_X_y=True)

    def separation(Z):
        D = np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1))
        same = y[:, None] == y[None]
        return D[same].mean() / D[~same].mean()

    for basis in ("lda", "triplet_diffs"):
        model = SCML_Supervised(basis=basis, n_basis=85, k_genuine=7, k_impostor=5,
                                random_state=42).fit(X, y)
        assert separation(X) > separation(model.transform(X)) + 0.03
    # metric-learn 0.7 drops gamma in SCML_Supervised; fastdr uses it
    fits = [SCML_Supervised(n_basis=20, gamma=g, max_iter=200, output_iter=100,
                            random_state=0).fit(X, y) for g in (5e-3, 1.0)]
    assert not np.allclose(metric(fits[0]), metric(fits[1]))


def test_triplets_classifier():
    X, y = load_iris(return_X_y=True)
    triplets = reference.scml_knn_triplets(X, y, 3, 4)
    model = SCML(n_basis=40, max_iter=500, output_iter=100, random_state=0).fit(X[triplets])
    assert set(np.unique(model.predict(X[triplets[::7]]))) <= {-1, 1}
    assert model.score(X[triplets]) > 0.9
    # metric-learn's toy: 4 points on a line, identity map, one triplet of four right
    model.components_ = np.eye(4)
    line = X[0] + np.arange(4)[:, None] * (X[0] - X[1]) / 4
    toy = np.array([[line[0], line[2], line[1]], [line[1], line[3], line[0]],
                    [line[1], line[2], line[3]], [line[3], line[0], line[2]]])
    assert model.score(toy) == 0.25
    assert (model.predict(np.array([[X[1], X[1], X[1]]])) == -1).all()  # a tie is -1
    with pytest.raises(NotFittedError):
        SCML().predict(X[triplets])


def test_preprocessor_pickle_and_determinism():
    X, y = load_iris(return_X_y=True)
    T = reference.scml_knn_triplets(X, y, 2, 3)
    params = {"n_basis": 30, "max_iter": 400, "output_iter": 100, "random_state": 7}
    formed = SCML(**params).fit(X[T])
    indexed = SCML(preprocessor=X, **params).fit(T)
    np.testing.assert_array_equal(indexed.components_, formed.components_)
    np.testing.assert_array_equal(indexed.predict(T), formed.predict(X[T]))
    clone = pickle.loads(pickle.dumps(formed))
    np.testing.assert_array_equal(clone.transform(X), formed.transform(X))
    runs = [SCML_Supervised(n_jobs=j, **params).fit(X, y) for j in (1, 2)]
    np.testing.assert_array_equal(runs[0].components_, runs[1].components_)
    rng_runs = [SCML_Supervised(**{**params, "random_state": np.random.default_rng(3)})
                .fit(X, y).components_ for _ in range(2)]
    np.testing.assert_array_equal(rng_runs[0], rng_runs[1])


def test_parameter_errors():
    # metric-learn's messages, which its tests compare for equality
    with pytest.raises(ValueError, match="^`basis` must be one of the options 'triplet_diffs' "
                                         r"or an array of shape \(n_basis, n_features\).$"):
        SCML(basis="bad_basis").fit(SQUARE)
    with pytest.raises(ValueError, match="options 'triplet_diffs', 'lda' or an array"):
        SCML_Supervised(basis="bad_basis").fit(LINE, [0, 0, 1, 1])
    for name in ("max_iter", "output_iter", "batch_size", "n_basis"):
        with pytest.raises(ValueError, match=f"^{name} should be an integer, instead it is of "
                                             "type <class 'float'>$"):
            SCML(**{name: 1.0}).fit(SQUARE)
        with pytest.raises(ValueError, match=f"'{name}' parameter of SCML must be"):
            SCML(**{name: 0}).fit(SQUARE)
    for name in ("k_genuine", "k_impostor"):
        with pytest.raises(ValueError, match=f"^{name} should be an integer"):
            SCML_Supervised(**{name: 1.0}).fit(LINE, [0, 0, 1, 1])
    with pytest.raises(ValueError, match="^The value of output_iter must be equal or smaller "
                                         "than max_iter.$"):
        SCML(max_iter=1, output_iter=2).fit(SQUARE)
    with pytest.raises(ValueError, match="'gamma' parameter of SCML must be"):
        SCML(gamma=0.0).fit(SQUARE)


def test_metric_learns_private_basis_methods():
    """metric-learn's tests call _generate_bases_dist_diff and _generate_bases_LDA: on points
    along one line the only basis is that line (the toys of metric-learn's tests)."""
    triplets = np.array([[0, 1, 2], [0, 1, 3], [1, 0, 2], [1, 0, 3],
                         [2, 3, 1], [2, 3, 0], [3, 2, 1], [3, 2, 0]])
    basis, n_basis = SCML_Supervised(n_basis=10)._generate_bases_dist_diff(triplets, LINE)
    assert n_basis == 10
    np.testing.assert_allclose(np.abs(basis), np.ones((10, 2)) / np.sqrt(2))
    basis, n_basis = SCML_Supervised(n_basis=7)._generate_bases_LDA(LINE, [0, 0, 1, 1])
    assert n_basis == 7
    np.testing.assert_allclose(np.abs(basis), np.ones((7, 2)) / np.sqrt(2))
    with pytest.raises(ValueError, match="row indices into X's 4 rows"):
        SCML_Supervised()._generate_bases_dist_diff(triplets + 1, LINE)


def test_basis_errors():
    with pytest.raises(ValueError, match=r"dimensionality \(3\) of the provided bases must "
                                         r"match the dimensionality of the data \(2\)"):
        SCML(basis=np.eye(3)).fit(SQUARE)
    with pytest.raises(ValueError, match=r"dimensionality \(3\) of the provided bases"):
        SCML_Supervised(basis=np.eye(3)).fit(LINE, [0, 0, 1, 1])
    with pytest.raises(ValueError, match="n_basis=3 but the basis array has 2 rows"):
        SCML(basis=np.eye(2), n_basis=3).fit(SQUARE)
    with pytest.raises(ValueError, match="basis"):
        SCML(basis=np.array([[np.nan, 1.0]])).fit(SQUARE)
    with pytest.raises(ValueError, match=r"Number of features \(2\) is greater than the "
                                         r"number of triplets\(1\)"):
        SCML().fit(SQUARE[:1])
    with pytest.raises(ValueError, match="Not enough labelled samples to generate 12 LDA"):
        SCML_Supervised(n_basis=12).fit(np.array([[0, 0], [1, 1], [3, 3.]]), [1, 2, 3])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SCML_Supervised(n_basis=1, max_iter=10, output_iter=10).fit(LINE, [0, 0, 1, 1])
    assert any("number of basis is less than the number of classes" in str(w.message)
               for w in caught)
    same = np.ones((6, 3, 2))  # every difference is zero: no basis can be built
    with pytest.raises(ValueError, match="found only 0 of n_basis=4 bases"):
        SCML(n_basis=4).fit(same)


def test_input_errors():
    with pytest.raises(ValueError, match="triplets must be a 3-D array"):
        SCML().fit(LINE_TRIPLETS)
    with pytest.raises(ValueError, match="shape"):
        SCML().fit(np.ones((4, 2, 2)))
    with pytest.raises(ValueError, match="index 6, out of range"):
        SCML(preprocessor=LINE).fit(LINE_TRIPLETS + np.eye(8, 3, dtype=int) * 6)
    bad = SQUARE.astype(float)
    bad[0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="inf|finite"):
        SCML().fit(bad)
    with pytest.raises(ValueError, match="along a basis overflow float64"):
        SCML(basis=np.array([[1e160, 0.0], [0.0, 1.0]]), max_iter=10,
             output_iter=10).fit(SQUARE)
    with pytest.raises(ValueError, match="needs at least 2 classes"):
        SCML_Supervised().fit(LINE, [0, 0, 0, 0])
    with pytest.raises(ValueError, match="requires y"):
        SCML_Supervised().fit(LINE, None)
    with pytest.raises(ValueError, match="single labelled point"):
        SCML_Supervised(n_basis=4).fit(LINE, [0, 1, 2, 3])
