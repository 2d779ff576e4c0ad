"""Drop-in signatures: fastdr's estimators and functions against scikit-learn's of the same name.

For each pair:
- every scikit-learn constructor (or function) parameter exists in fastdr with an equal
  default, and the parameters scikit-learn takes positionally are fastdr's positional
  parameters, in the same order (fastdr's extras are keyword-only);
- every public scikit-learn method exists on fastdr's estimator and takes scikit-learn's
  parameters the same way;
- every fitted attribute in scikit-learn's "Attributes" docstring section exists on fastdr's
  estimator fitted on the same data with the same parameters, with the same shape when both
  are arrays.
"""

import importlib
import inspect
import math
import numbers
import re
import warnings

import pytest
import sklearn.manifold
import sklearn.metrics
import sklearn.neighbors as skn
from sklearn.utils import get_tags

import fastdr
from fastdr.neighbors import (
    KNeighborsClassifier,
    KNeighborsRegressor,
    NearestNeighbors,
    kneighbors_graph,
    radius_neighbors_graph,
)

from ..estimators import small_data

# name -> (scikit-learn module, constructor parameters under which scikit-learn sets each of
# its documented attributes: the union over them must cover the Attributes section)
ESTIMATORS = {
    "PCA": ("sklearn.decomposition", [{}]),
    "IncrementalPCA": ("sklearn.decomposition", [{}]),
    "KernelPCA": ("sklearn.decomposition", [{}, {"fit_inverse_transform": True}]),
    "LinearDiscriminantAnalysis": ("sklearn.discriminant_analysis",
                                   [{}, {"store_covariance": True}]),
    "ClassicalMDS": ("sklearn.manifold", [{}]),
    "NeighborhoodComponentsAnalysis": ("sklearn.neighbors", [{"max_iter": 5}]),
    "NearestNeighbors": ("sklearn.neighbors", [{}]),
    "KNeighborsClassifier": ("sklearn.neighbors", [{}]),
    "KNeighborsRegressor": ("sklearn.neighbors", [{}]),
    "Isomap": ("sklearn.manifold", [{}]),
    "LocallyLinearEmbedding": ("sklearn.manifold", [{}]),
}

FUNCTIONS = {
    "kneighbors_graph": "sklearn.neighbors",
    "radius_neighbors_graph": "sklearn.neighbors",
    "pairwise_distances": "sklearn.metrics",
    "locally_linear_embedding": "sklearn.manifold",
}

POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _sklearn(name, module):
    return getattr(importlib.import_module(module), name)


def _is_routing_method(name):
    """scikit-learn's metadata-routing API (checked on its own, below)."""
    return name == "get_metadata_routing" or re.fullmatch(r"set_\w+_request", name) is not None


def _same_default(ours, theirs):
    """Equal defaults: the same string, the same number (0 and 0.0 alike; True is not 1),
    or the same object (None, required)."""
    if ours is theirs:
        return True
    if isinstance(ours, bool) or isinstance(theirs, bool):
        return False
    if isinstance(ours, numbers.Real) and isinstance(theirs, numbers.Real):
        return ours == theirs or (math.isnan(ours) and math.isnan(theirs))
    return isinstance(ours, str) and isinstance(theirs, str) and ours == theirs


def signature_problems(ours, theirs):
    """How ``ours`` fails to take every argument the way ``theirs`` does (empty: it does)."""
    ours_params = inspect.signature(ours).parameters
    theirs_params = inspect.signature(theirs).parameters
    problems = []
    ours_kinds = {p.kind for p in ours_params.values()}
    for name, param in theirs_params.items():
        if name == "self":
            continue
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            if param.kind not in ours_kinds:
                problems.append(f"no {'**' if param.kind == param.VAR_KEYWORD else '*'}{name}")
            continue
        if name not in ours_params:
            problems.append(f"missing parameter {name}={param.default!r}")
        elif not _same_default(ours_params[name].default, param.default):
            problems.append(f"{name}: default {ours_params[name].default!r}, scikit-learn's "
                            f"is {param.default!r}")
    positional = lambda params: [n for n, p in params.items()  # noqa: E731
                                 if p.kind in POSITIONAL and n != "self"]
    if positional(ours_params) != positional(theirs_params):
        problems.append(f"positional parameters {positional(ours_params)}, scikit-learn's "
                        f"are {positional(theirs_params)}")
    return problems


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_constructor_takes_scikit_learns_parameters(name):
    problems = signature_problems(getattr(fastdr, name), _sklearn(name, ESTIMATORS[name][0]))
    assert problems == [], f"fastdr.{name}: " + "; ".join(problems)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_function_takes_scikit_learns_parameters(name):
    problems = signature_problems(getattr(fastdr, name), _sklearn(name, FUNCTIONS[name]))
    assert problems == [], f"fastdr.{name}: " + "; ".join(problems)


def _public_methods(cls):
    return sorted(m for m in dir(cls)
                  if not m.startswith("_") and callable(getattr(cls, m)))


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_public_methods_exist_with_scikit_learns_parameters(name):
    theirs = _sklearn(name, ESTIMATORS[name][0])
    ours = getattr(fastdr, name)
    problems = []
    for method in _public_methods(theirs):
        if _is_routing_method(method):
            continue
        if not callable(getattr(ours, method, None)):
            problems.append(f"no method {method}")
            continue
        problems += [f"{method}: {p}" for p in
                     signature_problems(getattr(ours, method), getattr(theirs, method))]
    assert problems == [], f"fastdr.{name}: " + "; ".join(problems)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_metadata_routing_methods_exist(name):
    # get_metadata_routing and the set_*_request methods that scikit-learn's meta-estimators
    # call when metadata routing is enabled
    theirs = _sklearn(name, ESTIMATORS[name][0])
    missing = [m for m in _public_methods(theirs)
               if _is_routing_method(m) and not callable(getattr(getattr(fastdr, name), m, None))]
    assert missing == [], f"fastdr.{name} lacks {missing}"


def documented_attributes(cls):
    """The names in the "Attributes" section of a numpydoc class docstring."""
    lines = inspect.getdoc(cls).splitlines()
    start = lines.index("Attributes") + 2
    names = []
    for i in range(start, len(lines)):
        if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1]):
            break  # the next section
        match = re.match(r"^(\w+)( :|$)", lines[i])
        if match:
            names.append(match.group(1))
    return names


def _fit(est, frame, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if get_tags(est).estimator_type == "regressor":
            return est.fit(frame, y.astype(float))
        return est.fit(frame, y)


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_documented_fitted_attributes_exist(name):
    pd = pytest.importorskip("pandas")
    module, configs = ESTIMATORS[name]
    theirs_cls = _sklearn(name, module)
    documented = documented_attributes(theirs_cls)
    X, y = small_data()
    # string column names, so that feature_names_in_ is set too
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    reached, problems = set(), []
    for params in configs:
        theirs = _fit(theirs_cls(**params), frame, y)
        try:
            ours = getattr(fastdr, name)(**params)
        except TypeError as error:  # a missing parameter (the constructor test names it)
            problems.append(f"{params}: {error}")
            reached.update(a for a in documented if hasattr(theirs, a))
            continue
        ours = _fit(ours, frame, y)
        for attr in documented:
            if not hasattr(theirs, attr):
                continue
            reached.add(attr)
            if not hasattr(ours, attr):
                problems.append(f"{params}: no attribute {attr}")
                continue
            theirs_shape = getattr(getattr(theirs, attr), "shape", None)
            ours_shape = getattr(getattr(ours, attr), "shape", None)
            if theirs_shape is not None and ours_shape is not None and \
                    ours_shape != theirs_shape:
                problems.append(f"{params}: {attr} has shape {ours_shape}, scikit-learn's "
                                f"{theirs_shape}")
    # the configurations above must make scikit-learn set every attribute it documents
    assert set(documented) <= reached, f"add a configuration that sets {set(documented) - reached}"
    assert problems == [], f"fastdr.{name}: " + "; ".join(problems)


def test_the_signature_checker_can_fail():
    def theirs(X, metric="minkowski", *, p=2, n_jobs=None, **kwds):
        pass

    def ours(X, *, metric="euclidean", n_jobs=None, p=2.0, flag=True):
        pass

    assert signature_problems(ours, theirs) == [
        "metric: default 'euclidean', scikit-learn's is 'minkowski'",
        "no **kwds",
        "positional parameters ['X'], scikit-learn's are ['X', 'metric']",
    ]
    assert signature_problems(theirs, theirs) == []
    assert not _same_default(1, True) and not _same_default("1", 1)
    assert _same_default(0, 0.0) and _same_default(None, None)
    assert documented_attributes(_sklearn("PCA", "sklearn.decomposition"))[0] == "components_"


# the neighbour estimators and functions of issue 15, and ClassicalMDS with its metrics
@pytest.mark.parametrize("est,sk_est", [
    (NearestNeighbors, skn.NearestNeighbors),
    (KNeighborsClassifier, skn.KNeighborsClassifier),
    (KNeighborsRegressor, skn.KNeighborsRegressor),
    (kneighbors_graph, skn.kneighbors_graph),
    (radius_neighbors_graph, skn.radius_neighbors_graph),
    (fastdr.pairwise_distances, sklearn.metrics.pairwise_distances),
    (fastdr.ClassicalMDS, sklearn.manifold.ClassicalMDS),
])
def test_signature_has_every_sklearn_parameter(est, sk_est):
    ours = inspect.signature(est).parameters
    for name, param in inspect.signature(sk_est).parameters.items():
        if param.kind == param.VAR_KEYWORD:
            assert any(p.kind == p.VAR_KEYWORD for p in ours.values())
            continue
        assert name in ours, name
        assert ours[name].default == param.default or (
            ours[name].default is param.default), name
        assert ours[name].kind == param.kind, name
