"""Output containers as scikit-learn's: the global ``sklearn.set_config(transform_output=...)``
and ``set_output``, pandas and polars, for every transformer, against scikit-learn's
namesake under the same configuration; ``get_feature_names_out`` checks its input as
scikit-learn does."""

import numpy as np
import pandas as pd
import polars as pl
import pytest
import sklearn
from sklearn import decomposition, discriminant_analysis, manifold, neighbors

from .. import estimators

# fastdr transformer -> scikit-learn's namesake with the same parameters (None: none exists)
TRANSFORMERS = {
    "PCA": decomposition.PCA,
    "IncrementalPCA": decomposition.IncrementalPCA,
    "KernelPCA": decomposition.KernelPCA,
    "LinearDiscriminantAnalysis": discriminant_analysis.LinearDiscriminantAnalysis,
    "ClassicalMDS": manifold.ClassicalMDS,
    "Isomap": manifold.Isomap,
    "LocallyLinearEmbedding": manifold.LocallyLinearEmbedding,
    "NeighborhoodComponentsAnalysis": neighbors.NeighborhoodComponentsAnalysis,
    "MMC_Supervised": None,
    "MMC": None,
    "Mahalanobis": None,
    "Covariance": None,
    "LFDA": None,
    "LMNN": None,
    "NCA": None,
    "SDML": None,
    "SDML_Supervised": None,
    "LSML": None,
    "LSML_Supervised": None,
    "SCML": None,
    "SCML_Supervised": None,
    "RCA": None,
    "RCA_Supervised": None,
    "MLKR": None,
    "ITML": None,
    "ITML_Supervised": None,
}
CONTAINER = {"pandas": pd.DataFrame, "polars": pl.DataFrame}


def _data():
    X, y = estimators.small_data()
    return pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])]), y


def _outputs(est, X, y):
    estimators.fit_estimator(est, X, y)
    outs = [est.transform(X)] if hasattr(est, "transform") else []
    est = sklearn.base.clone(est)
    if estimators.NOT_SKLEARN_CHECKABLE.get(type(est).__name__):
        return [*outs, estimators.fit_estimator(est, X, y).transform(X)]
    return [*outs, est.fit_transform(X, y)]


def _sklearn_twin(name):
    twin = TRANSFORMERS[name]
    if twin is None:
        return None
    return twin(**{k: v for k, v in estimators.PARAMS[name].items()
                   if estimators.accepts(twin, k)})  # fastdr's extras are its own


@pytest.mark.parametrize("output", ["pandas", "polars"])
@pytest.mark.parametrize("name", list(TRANSFORMERS))
def test_global_config_gives_scikit_learns_container(name, output):
    assert set(TRANSFORMERS) == {n for n, c in estimators.public_estimators()
                                 if hasattr(c, "fit_transform")}
    X, y = _data()
    with sklearn.config_context(transform_output=output):
        outs = _outputs(estimators.make_estimator(name), X, y)
        twin = _sklearn_twin(name)
        expected = None if twin is None else twin.fit_transform(X, y)
    for out in outs:
        if expected is not None:  # scikit-learn's ClassicalMDS is no transformer: ndarray
            assert type(out) is type(expected), (type(out), type(expected))
            assert getattr(out, "columns", None) is None or (
                list(out.columns) == list(expected.columns))
        else:
            assert isinstance(out, CONTAINER[output]), type(out)
            assert list(out.columns)[0] == f"{name.lower()}0"
    if output == "pandas" and name != "ClassicalMDS":
        assert isinstance(outs[0], pd.DataFrame) and outs[0].index.equals(X.index)
    with sklearn.config_context(transform_output="default"):
        assert isinstance(_outputs(estimators.make_estimator(name), X, y)[0], np.ndarray)


@pytest.mark.parametrize("name", ["PCA", "Isomap", "NeighborhoodComponentsAnalysis"])
def test_set_output_on_the_estimator_wins_over_the_global_config(name):
    X, y = _data()
    est = estimators.make_estimator(name).set_output(transform="polars")
    with sklearn.config_context(transform_output="pandas"):
        assert isinstance(est.fit_transform(X, y), pl.DataFrame)
        assert isinstance(sklearn.base.clone(est).fit_transform(X, y), pl.DataFrame)
    with pytest.raises(ValueError, match="output config must be in"):
        estimators.make_estimator(name).set_output(transform="arrow").fit_transform(X, y)


def test_get_feature_names_out_checks_its_input_as_scikit_learn():
    X, y = _data()
    ours = estimators.make_estimator("PCA").fit(X)
    theirs = decomposition.PCA(n_components=2).fit(X)
    for bad in (list(X.columns) + ["extra"], ["a", "b", "c", "d", "e"]):
        with pytest.raises(ValueError) as sk:
            theirs.get_feature_names_out(bad)
        with pytest.raises(ValueError) as mine:
            ours.get_feature_names_out(bad)
        assert str(mine.value) == str(sk.value)
    np.testing.assert_array_equal(ours.get_feature_names_out(list(X.columns)),
                                  theirs.get_feature_names_out(list(X.columns)))
    plain = estimators.make_estimator("PCA").fit(X.to_numpy())
    with pytest.raises(ValueError, match=r"length equal to number of features \(5\), got 4"):
        plain.get_feature_names_out(["a", "b", "c", "d"])


def test_classical_mds_has_no_set_output_as_scikit_learns():
    assert not hasattr(estimators.make_estimator("ClassicalMDS"), "set_output")
    assert not hasattr(manifold.ClassicalMDS(), "set_output")


@pytest.mark.parametrize("display", ["diagram", "text"])
def test_notebook_view_is_scikit_learns(display):
    ours, theirs = estimators.make_estimator("PCA"), decomposition.PCA(n_components=2)
    with sklearn.config_context(display=display):
        mine, sk = ours._repr_mimebundle_(), theirs._repr_mimebundle_()
        assert set(mine) == set(sk)
        assert hasattr(ours, "_repr_html_") == hasattr(theirs, "_repr_html_")
    assert mine["text/plain"] == repr(ours)
    if display == "diagram":
        assert "n_components" in mine["text/html"] and "PCA" in mine["text/html"]
        assert mine["text/html"].startswith("<style>") == sk["text/html"].startswith("<style>")
