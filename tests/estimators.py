"""Every public estimator, with small data and a canonical output, for library-wide tests."""

import inspect

import numpy as np
from sklearn.utils import get_tags

import fastdr

# name -> constructor parameters that keep the test data small and the runs deterministic
# (random_state fixes the iterative eigensolvers' start vectors, used above a few hundred rows)
PARAMS = {
    "NearestNeighbors": {"n_neighbors": 4},
    "KNeighborsClassifier": {"n_neighbors": 4, "weights": "distance"},
    "KNeighborsRegressor": {"n_neighbors": 4},
    "PCA": {"n_components": 2, "random_state": 0},
    "IncrementalPCA": {"n_components": 2},
    "KernelPCA": {"n_components": 2, "kernel": "rbf", "random_state": 0},
    "LinearDiscriminantAnalysis": {},  # n_components > n_classes - 1 is an error (binary checks)
    "ClassicalMDS": {"n_components": 2, "random_state": 0},
    "Isomap": {"n_neighbors": 8, "n_components": 2, "on_disconnected": "connect",
               "random_state": 0},
    "LocallyLinearEmbedding": {"n_neighbors": 8, "n_components": 2, "random_state": 0},
    "NeighborhoodComponentsAnalysis": {"n_components": 2, "max_iter": 5, "random_state": 0},
    "MMC_Supervised": {"max_iter": 10, "random_state": 0},
    "MMC": {"max_iter": 10, "random_state": 0},  # fitted on index pairs: see fit_estimator
    "Mahalanobis": {"weights": [0.5, 1.0, 2.0, 1.5, 0.25]},  # a fixed metric on 5 features
    "Covariance": {},
    "LFDA": {"n_components": 2, "k": 3},
    "LMNN": {"n_components": 2, "n_neighbors": 2, "max_iter": 20, "random_state": 0},
    "NCA": {"n_components": 2, "max_iter": 10, "random_state": 0},
    "RCA": {},  # fitted on chunklet labels: see fit_estimator
    "RCA_Supervised": {"n_chunks": 6, "chunk_size": 3, "random_state": 0},
    "MLKR": {"n_components": 2, "max_iter": 5, "random_state": 0},
    "ITML_Supervised": {"max_iter": 20, "random_state": 0},
    "ITML": {"max_iter": 20, "random_state": 0},  # fitted on labelled pairs: see fit_estimator
    # the inverse covariance as prior, the pairs lightly: the setting of metric-learn's example
    "SDML_Supervised": {"prior": "covariance", "balance_param": 1e-5, "random_state": 0},
    "SDML": {"prior": "covariance", "balance_param": 1e-5},  # labelled pairs: fit_estimator
    "LSML_Supervised": {"max_iter": 50, "random_state": 0},
    "LSML": {"max_iter": 50},  # quadruplets: fit_estimator
    "SCML_Supervised": {"max_iter": 200, "output_iter": 100, "random_state": 0},
    "SCML": {"n_basis": 20, "max_iter": 200, "output_iter": 100, "random_state": 0},  # triplets
}

# estimators whose fit does not take scikit-learn's (X, y): scikit-learn's estimator checks
# cannot drive them (the library-wide tests here fit them through fit_estimator)
NOT_SKLEARN_CHECKABLE = {
    "MMC": "fit takes must-link / cannot-link index pairs (or labelled pairs), not (X, y)",
    "Mahalanobis": "a fixed metric: its feature count is set by its parameters, not by X",
    "RCA": "fit takes chunklet labels (ints, -1 for none), not class labels of any type",
    "ITML": "fit takes labelled pairs (n_pairs, 2, n_features), not (X, y)",
    "SDML": "fit takes labelled pairs (n_pairs, 2, n_features), not (X, y)",
    "LSML": "fit takes quadruplets (n_quadruplets, 4, n_features), not (X, y)",
    "SCML": "fit takes triplets (n_triplets, 3, n_features), not (X, y)",
}


# learners whose fit takes tuples (labelled pairs, triplets, quadruplets) and nothing of
# shape (n_samples, n_features): the X-based catalogues (bad input, feature names) do not
# apply to their fit; their input checks are tested in their own files
PAIR_LEARNERS = {"ITML": "tests/metric_learning/test_itml.py",
                 "SDML": "tests/metric_learning/test_sdml.py",
                 "LSML": "tests/metric_learning/test_lsml.py",
                 "SCML": "tests/metric_learning/test_scml.py"}


def x_estimators():
    """(name, class) for every estimator whose fit takes X of shape (n_samples, n_features)."""
    return [(name, cls) for name, cls in public_estimators() if name not in PAIR_LEARNERS]


def public_estimators():
    """(name, class) for every estimator in PARAMS; raises if fastdr does not export one."""
    missing = [name for name in PARAMS if name not in fastdr.__all__]
    if missing:
        raise AssertionError(
            f"tests/estimators.py lists {missing}, which fastdr does not export. Export them "
            f"from fastdr, or remove them from PARAMS."
        )
    return [(name, getattr(fastdr, name)) for name in PARAMS]


def make_estimator(name, **extra):
    params = dict(PARAMS[name])
    params.update(extra)
    return getattr(fastdr, name)(**params)


def accepts(cls, param):
    return param in inspect.signature(cls.__init__).parameters


def small_data(seed=0, m=90, d=5):
    """Connected, well-spread data with three classes."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), m // 3)
    X = rng.standard_normal((m, d)) + y[:, None] * 1.5
    return X, y


def pairs_from_labels(y):
    """Deterministic must-link and cannot-link index pairs drawn from class labels.

    Must-link: each row with the next row of its class. Cannot-link: the k-th row of each
    class with the k-th row of the next class.
    """
    y = np.asarray(y)
    members = [np.flatnonzero(y == c) for c in np.unique(y)]
    must = [(a, b) for idx in members for a, b in zip(idx[:-1], idx[1:], strict=True)]
    cannot = [(a, b) for left, right in zip(members[:-1], members[1:], strict=True)
              for a, b in zip(left, right, strict=False)]
    as_pairs = lambda p: np.asarray(p, dtype=np.int64).reshape(-1, 2)  # noqa: E731
    return as_pairs(must), as_pairs(cannot)


def quadruplets_from_labels(X, y):
    """Deterministic quadruplets: a must-link pair of :func:`pairs_from_labels`, then a
    cannot-link pair (as many as the shorter list), as points (n, 4, n_features)."""
    must, cannot = pairs_from_labels(y)
    n = min(len(must), len(cannot))
    return np.asarray(X)[np.concatenate([must[:n], cannot[:n]], axis=1)]


def triplets_from_labels(X, y):
    """Deterministic triplets: each must-link pair of :func:`pairs_from_labels` with the
    first row of another class as the third point, as points (n, 3, n_features)."""
    y = np.asarray(y)
    must, _ = pairs_from_labels(y)
    classes = np.unique(y)
    first = {c: int(np.flatnonzero(y == c)[0]) for c in classes}
    other = [first[classes[(np.searchsorted(classes, y[a]) + 1) % len(classes)]]
             for a in must[:, 0]]
    return np.asarray(X)[np.column_stack([must, other])]


def chunklets_from_labels(y, size=3):
    """Deterministic chunklet labels: consecutive runs of ``size`` rows of one class."""
    y = np.asarray(y)
    chunks = np.full(y.shape[0], -1, dtype=np.int64)
    label = 0
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        for start in range(0, idx.shape[0] - size + 1, size):
            chunks[idx[start:start + size]] = label
            label += 1
    return chunks


def fit_estimator(est, X, y):
    """Fit ``est`` on X the way its API asks; y supplies the labels or the pairs."""
    name = type(est).__name__
    if name == "MMC":
        must, cannot = pairs_from_labels(y)
        return est.fit(X, must_link=must, cannot_link=cannot)
    if name == "Mahalanobis":
        return est.fit(X)
    if name in ("ITML", "SDML"):
        must, cannot = pairs_from_labels(y)
        index = np.concatenate([must, cannot])
        pairs = np.stack([np.asarray(X)[index[:, 0]], np.asarray(X)[index[:, 1]]], axis=1)
        labels = np.r_[np.ones(len(must)), -np.ones(len(cannot))]
        return est.fit(pairs, labels)
    if name == "LSML":
        return est.fit(quadruplets_from_labels(X, y))
    if name == "SCML":
        return est.fit(triplets_from_labels(X, y))
    if name == "RCA":
        return est.fit(X, chunklets_from_labels(y))
    kind = get_tags(est).estimator_type
    if kind == "regressor":
        return est.fit(X, np.asarray(y).astype(float))
    return est.fit(X, y)


def query_points(est, X):
    """The estimator's query on points: predict, else transform, else kneighbors (a classifier
    of tuples, such as MMC or LSML, predicts on tuples: its query on points is transform)."""
    # (a classifier of tuples: of pairs, triplets or quadruplets)
    pair_classifier = hasattr(est, "calibrate_threshold") or hasattr(est, "_tuple_size")
    for method in ("predict", "transform", "kneighbors"):
        if hasattr(est, method) and not (method == "predict" and pair_classifier):
            return getattr(est, method)(X)
    raise AssertionError("no query method")


def fit_output(est, X, y):
    """Fit and return the estimator's canonical output on X."""
    fit_estimator(est, X, y)
    if get_tags(est).estimator_type in ("classifier", "regressor"):
        return est.predict(X)
    if hasattr(est, "kneighbors"):
        return est.kneighbors()[1]
    return np.asarray(est.transform(X))
