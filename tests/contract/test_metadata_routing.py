"""scikit-learn's metadata routing reaches fastdr estimators as it reaches its own."""

import numpy as np
import pytest
import sklearn
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.model_selection import cross_validate
from sklearn.neighbors import KNeighborsClassifier as SkKNN

import fastdr


def _data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 4))
    y = (X[:, 0] + 0.5 * rng.standard_normal(120) > 0).astype(int)
    w = rng.uniform(0.1, 3.0, 120)
    return X, y, w


def test_set_score_request_needs_routing_enabled_as_in_sklearn():
    with pytest.raises(RuntimeError, match="enable_metadata_routing=True"):
        SkKNN().set_score_request(sample_weight=True)
    with pytest.raises(RuntimeError, match="enable_metadata_routing=True"):
        fastdr.KNeighborsClassifier().set_score_request(sample_weight=True)


def test_routing_requests_match_sklearn():
    with sklearn.config_context(enable_metadata_routing=True):
        ours = fastdr.KNeighborsClassifier().set_score_request(sample_weight=True)
        theirs = SkKNN().set_score_request(sample_weight=True)
        assert str(ours.get_metadata_routing()) == str(theirs.get_metadata_routing())
        assert "sample_weight" in str(ours.get_metadata_routing())
    # PCA routes nothing: no set_*_request method, like sklearn's
    assert not any(name.startswith("set_") and name.endswith("_request")
                   for name in dir(fastdr.PCA))
    assert str(fastdr.PCA().get_metadata_routing()) == str(
        sklearn.decomposition.PCA().get_metadata_routing())


def test_cross_validate_routes_sample_weight_to_score_like_sklearn():
    X, y, w = _data()
    with sklearn.config_context(enable_metadata_routing=True):
        scores = {}
        for name, est in (("fastdr", fastdr.KNeighborsClassifier(n_neighbors=5)),
                          ("sklearn", SkKNN(n_neighbors=5))):
            est.set_score_request(sample_weight=True)
            scores[name] = cross_validate(est, X, y, cv=3, params={"sample_weight": w})[
                "test_score"]
        unweighted = cross_validate(fastdr.KNeighborsClassifier(n_neighbors=5), X, y, cv=3)[
            "test_score"]
    np.testing.assert_allclose(scores["fastdr"], scores["sklearn"], rtol=0, atol=1e-12)
    assert not np.allclose(scores["fastdr"], unweighted)  # the weights did arrive


def test_unrequested_metadata_is_an_error_as_in_sklearn():
    X, y, w = _data()
    with sklearn.config_context(enable_metadata_routing=True):
        for est in (fastdr.KNeighborsClassifier(), SkKNN()):
            with pytest.raises(UnsetMetadataPassedError):
                cross_validate(est, X, y, cv=3, params={"sample_weight": w})


def test_request_survives_clone():
    from sklearn.neighbors import KNeighborsRegressor as SkKNNRegressor

    with sklearn.config_context(enable_metadata_routing=True):
        est = fastdr.KNeighborsRegressor().set_score_request(sample_weight="w")
        copy = sklearn.base.clone(est)
        theirs = sklearn.base.clone(SkKNNRegressor().set_score_request(sample_weight="w"))
        assert copy.get_metadata_routing().score.requests == {"sample_weight": "w"}
        assert str(copy.get_metadata_routing()) == str(est.get_metadata_routing())
        assert str(copy.get_metadata_routing()) == str(theirs.get_metadata_routing())
