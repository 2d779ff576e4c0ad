"""pandas column names: recorded at fit, checked at every later call, as scikit-learn does.

Each case is compared with scikit-learn's own behaviour on one of its estimators (the same
exception or warning class, and the same first line of the message).
"""

import warnings

import numpy as np
import pandas as pd
import pytest

from ..estimators import fit_estimator, make_estimator, query_points, small_data, x_estimators

CASES = ["reordered", "renamed", "names_then_array", "array_then_names", "same_names", "arrays"]


def _names():
    return [name for name, _ in x_estimators()]  # pair learners: tests/estimators.py


def _name_case_pairs():
    return [(name, case) for name, _ in x_estimators() for case in CASES]


def _frame(X, columns=None):
    columns = columns or [f"f{i}" for i in range(X.shape[1])]
    return pd.DataFrame(X, columns=columns)


def _fit(est, X, y):
    return fit_estimator(est, X, y)


def _query(est, X):
    return query_points(est, X)


def _sklearn_outcome(fit_X, query_X):
    """What scikit-learn does (exception or warning class, first line) for this case."""
    from sklearn.neighbors import NearestNeighbors

    est = NearestNeighbors(n_neighbors=3).fit(fit_X)
    return _outcome(lambda: est.kneighbors(query_X), "NearestNeighbors")


def _outcome(call, name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            call()
        except (ValueError, TypeError) as exc:
            return type(exc), str(exc).splitlines()[0].replace(name, "<est>")
    relevant = [w for w in caught if "feature names" in str(w.message)]
    if relevant:
        w = relevant[0]
        return w.category, str(w.message).splitlines()[0].replace(name, "<est>")
    return None, None


def _cases(X):
    named = _frame(X)
    reordered = named[list(named.columns[::-1])]
    renamed = _frame(X, [f"g{i}" for i in range(X.shape[1])])
    return {
        "reordered": (named, reordered),
        "renamed": (named, renamed),
        "names_then_array": (named, X),
        "array_then_names": (X, named),
        "same_names": (named, named),
        "arrays": (X, X),
    }


@pytest.mark.parametrize("name", _names())
def test_feature_names_in_is_recorded_only_for_string_names(name):
    X, y = small_data()
    est = _fit(make_estimator(name), _frame(X), y)
    np.testing.assert_array_equal(est.feature_names_in_, [f"f{i}" for i in range(5)])
    assert est.feature_names_in_.dtype == object
    # a refit on an array forgets them; integer column names are not feature names
    assert not hasattr(_fit(est, X, y), "feature_names_in_")
    assert not hasattr(_fit(make_estimator(name), pd.DataFrame(X), y), "feature_names_in_")


@pytest.mark.parametrize(("name", "case"), _name_case_pairs())
def test_feature_name_checks_match_sklearn(name, case):
    X, y = small_data()
    fit_X, query_X = _cases(X)[case]
    expected = _sklearn_outcome(fit_X, query_X)
    est = _fit(make_estimator(name), fit_X, y)
    got = _outcome(lambda: _query(est, query_X), name)
    assert got == expected


@pytest.mark.parametrize("name", _names())
def test_reordered_columns_raise_with_the_remedy(name):
    X, y = small_data()
    named = _frame(X)
    est = _fit(make_estimator(name), named, y)
    with pytest.raises(ValueError, match="The feature names should match those that were "
                                         "passed during fit.\nFeature names must be in the "
                                         "same order as they were in fit."):
        _query(est, named[["f4", "f3", "f2", "f1", "f0"]])
    # the remedy given in the message works
    _query(est, named[list(est.feature_names_in_)])


def test_mixed_column_name_types_are_refused_like_sklearn():
    from sklearn.neighbors import NearestNeighbors as SkNN

    import fastdr

    X, _ = small_data()
    df = pd.DataFrame(X, columns=["a", "b", 3, "d", "e"])
    with pytest.raises(TypeError, match="Feature names are only supported if all input "
                                        "features have string names"):
        SkNN().fit(df)
    with pytest.raises(TypeError, match="Feature names are only supported if all input "
                                        "features have string names"):
        fastdr.NearestNeighbors().fit(df)


def test_mahalanobis_without_fit_takes_any_columns_and_checks_after_fit():
    import fastdr

    X, _ = small_data()
    named = _frame(X)
    metric = fastdr.Mahalanobis(weights=np.ones(5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metric.transform(named)  # never fitted: nothing to compare with, no warning
    metric.fit(named)
    with pytest.raises(ValueError, match="The feature names should match"):
        metric.transform(named[named.columns[::-1]])
    with pytest.raises(ValueError, match="The feature names should match"):
        metric.pairwise(named, named[named.columns[::-1]])


def test_neighbour_queries_all_check_names():
    import fastdr

    X, _ = small_data()
    named = _frame(X)
    bad = named[named.columns[::-1]]
    nn = fastdr.NearestNeighbors(n_neighbors=3, radius=1.0).fit(named)
    for call in (nn.kneighbors, nn.radius_neighbors, nn.kneighbors_graph,
                 nn.radius_neighbors_graph):
        with pytest.raises(ValueError, match="The feature names should match"):
            call(bad)
