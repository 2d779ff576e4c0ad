"""Every public estimator, with small data and a canonical output, for library-wide tests."""

import numpy as np

import fastdr

# name -> constructor parameters that keep the test data small and the runs deterministic
PARAMS = {
    "NearestNeighbors": {"n_neighbors": 4},
    "KNeighborsClassifier": {"n_neighbors": 4, "weights": "distance"},
    "KNeighborsRegressor": {"n_neighbors": 4},
    "PCA": {"n_components": 2},
    "KernelPCA": {"n_components": 2, "kernel": "rbf"},
    "LinearDiscriminantAnalysis": {},  # n_components > n_classes - 1 is an error (binary checks)
    "ClassicalMDS": {"n_components": 2},
    "Isomap": {"n_neighbors": 8, "n_components": 2, "on_disconnected": "connect"},
    "LocallyLinearEmbedding": {"n_neighbors": 8, "n_components": 2},
    "NeighborhoodComponentsAnalysis": {"n_components": 2, "max_iter": 5, "random_state": 0},
    "MMC_Supervised": {"max_iter": 10, "random_state": 0},
}


def public_estimators():
    """(name, class) for every estimator fastdr exports that appears in PARAMS."""
    return [(name, getattr(fastdr, name)) for name in PARAMS if hasattr(fastdr, name)]


def make_estimator(name, **extra):
    params = dict(PARAMS[name])
    params.update(extra)
    return getattr(fastdr, name)(**params)


def accepts(cls, param):
    import inspect

    return param in inspect.signature(cls.__init__).parameters


def small_data(seed=0, m=90, d=5):
    """Connected, well-spread data with three classes."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), m // 3)
    X = rng.standard_normal((m, d)) + y[:, None] * 1.5
    return X, y


def fit_output(est, X, y):
    """Fit and return the estimator's canonical output on X."""
    kind = getattr(est, "_estimator_type", None)
    if kind == "classifier":
        return est.fit(X, y).predict(X)
    if kind == "regressor":
        return est.fit(X, y.astype(float)).predict(X)
    if hasattr(est, "kneighbors"):
        return est.fit(X).kneighbors()[1]
    return np.asarray(est.fit(X, y).transform(X))
