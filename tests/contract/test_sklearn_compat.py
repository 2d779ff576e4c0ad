"""scikit-learn compatibility: estimator checks, Pipeline, clone, GridSearchCV, pickle, pandas."""

import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

from ..estimators import (
    NOT_SKLEARN_CHECKABLE,
    PARAMS,
    fit_estimator,
    fit_output,
    make_estimator,
    public_estimators,
    small_data,
)

ESTIMATORS = [make_estimator(name) for name, _ in public_estimators()
              if name not in NOT_SKLEARN_CHECKABLE]


def _expected_failures(estimator):
    """Checks that cannot apply, as each estimator lists them (with the reason)."""
    return dict(getattr(estimator, "_sklearn_check_exemptions", {}))


@pytest.mark.filterwarnings("ignore::UserWarning")
@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# metric-learn's learners on tuples: their fit takes pairs (n, 2, d) with labels, triplets
# (n, 3, d) or quadruplets (n, 4, d), as metric-learn's, never scikit-learn's 2-D X. Every
# check that fits on 2-D X (scikit-learn has no tuple input) fails for that one reason; the
# same properties on tuple input are tested in each learner's file and in
# tests/metric_learning/test_metric_learn_api.py (pickling, input errors, preprocessor), and
# the checks that need no fit (parameters, cloning, repr, tags) run and pass.
_FITS_ON_2D_X = (
    "check_complex_data", "check_dict_unchanged", "check_dont_overwrite_parameters",
    "check_dtype_object", "check_estimators_dtypes",
    "check_estimators_empty_data_messages", "check_estimators_fit_returns_self",
    "check_estimators_nan_inf", "check_estimators_overwrite_params", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_fit2d_1feature", "check_fit2d_1sample",
    "check_fit2d_predict1d", "check_fit_check_is_fitted", "check_fit_idempotent",
    "check_fit_score_takes_y", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_n_features_in", "check_n_features_in_after_fitting",
    "check_pipeline_consistency", "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input", "check_transformer_data_not_an_array",
    "check_transformer_general", "check_transformer_preserve_dtypes",
)
# the checks that also fit on 2-D X but apply to some learners only: an iterative learner's
# n_iter_ (SDML's graphical lasso has none), fit(X, y=None) where fit takes labels (ITML and
# SDML take labelled pairs), fit(X, y) on 1-D X where fit takes no y (SCML's, as
# metric-learn's, takes triplets only: the extra y is a TypeError, not the ValueError asked),
# and sparse X where the error must name sparse input (MMC's fit also takes a 2-D X, with its
# index pairs; SCML's takes no y); the other learners' shape error passes those checks
_SPARSE = ("check_estimator_sparse_array", "check_estimator_sparse_matrix",
           "check_estimator_sparse_tag")
_ALSO_FITS_ON_2D_X = {
    "MMC": ("check_transformer_n_iter", *_SPARSE),
    "ITML": ("check_requires_y_none", "check_transformer_n_iter"),
    "SDML": ("check_requires_y_none",),
    "LSML": ("check_transformer_n_iter",),
    "SCML": ("check_fit1d", "check_transformer_n_iter", *_SPARSE),
}
TUPLE_LEARNERS = list(_ALSO_FITS_ON_2D_X)


def _tuple_exemptions(estimator):
    """Each check that fits on 2-D X, with the reason it cannot apply."""
    name = type(estimator).__name__
    reason = f"fits on 2-D X; {name}.fit takes metric-learn's tuples (n_tuples, k, n_features)"
    return dict.fromkeys((*_FITS_ON_2D_X, *_ALSO_FITS_ON_2D_X[name]), reason)


@pytest.mark.filterwarnings("ignore::UserWarning")
@parametrize_with_checks([make_estimator(name) for name in TUPLE_LEARNERS],
                         expected_failed_checks=_tuple_exemptions)
def test_sklearn_estimator_checks_on_tuple_learners(estimator, check):
    check(estimator)


def test_every_tuple_learner_runs_the_checks():
    # every estimator scikit-learn's checks cannot drive on (X, y) but a fixed metric and
    # RCA's chunklets (both run with their own tests) is a tuple learner checked above
    assert set(TUPLE_LEARNERS) == set(NOT_SKLEARN_CHECKABLE) - {"Mahalanobis", "RCA"}


def test_every_drop_in_estimator_runs_scikit_learns_checks_without_exemptions():
    # the estimators that issues 14 and 15 make drop-ins for scikit-learn's must all go
    # through check_estimator above, none of its checks expected to fail
    from ..parity.test_parity_signatures import ESTIMATORS as DROP_INS

    checked = {type(est).__name__: est for est in ESTIMATORS}
    assert set(DROP_INS) <= set(checked), set(DROP_INS) - set(checked)
    assert {name: _expected_failures(checked[name]) for name in DROP_INS} == {
        name: {} for name in DROP_INS}


@pytest.mark.parametrize("name", list(PARAMS))
def test_clone_pickle_and_pipeline(name):
    X, y = small_data()
    est = make_estimator(name)
    twin = clone(est)
    assert twin.get_params() == est.get_params() or repr(twin) == repr(est)
    out = fit_output(est, X, y)
    restored = pickle.loads(pickle.dumps(est))
    kind = get_tags(est).estimator_type
    if kind in ("classifier", "regressor"):
        np.testing.assert_array_equal(restored.predict(X), est.predict(X))
    elif hasattr(est, "transform"):
        np.testing.assert_array_equal(restored.transform(X), est.transform(X))
        if name in NOT_SKLEARN_CHECKABLE:  # Pipeline.fit passes (X, y), which MMC refuses
            return
        pipe = make_pipeline(make_estimator(name), make_estimator("KNeighborsClassifier"))
        assert pipe.fit(X, y).score(X, y) > 0.5
    else:
        np.testing.assert_array_equal(restored.kneighbors()[1], out)


def test_grid_search_over_fastdr_parameters_equals_sklearns():
    from sklearn.decomposition import PCA as SkPCA
    from sklearn.neighbors import KNeighborsClassifier as SkKNN

    X, y = small_data(m=120)
    grid = {"n_neighbors": [1, 3, 5], "weights": ["uniform", "distance"]}
    ours = GridSearchCV(make_estimator("KNeighborsClassifier"), grid, cv=3).fit(X, y)
    theirs = GridSearchCV(SkKNN(**PARAMS["KNeighborsClassifier"]), grid, cv=3).fit(X, y)
    assert ours.best_params_ == theirs.best_params_
    np.testing.assert_array_equal(ours.cv_results_["mean_test_score"],
                                  theirs.cv_results_["mean_test_score"])
    grid = {"pca__n_components": [1, 2]}
    ours = GridSearchCV(make_pipeline(make_estimator("PCA"), make_estimator(
        "KNeighborsClassifier")), grid, cv=3).fit(X, y)
    theirs = GridSearchCV(make_pipeline(SkPCA(**PARAMS["PCA"]), SkKNN(
        **PARAMS["KNeighborsClassifier"])), grid, cv=3).fit(X, y)
    assert ours.best_params_ == theirs.best_params_
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"],
                               theirs.cv_results_["mean_test_score"], rtol=0, atol=1e-12)


# ClassicalMDS returns arrays whatever the output configuration, as scikit-learn's (which has
# no transform and no set_output): tests/contract/test_set_output.py compares the two
@pytest.mark.parametrize("name", [n for n, c in public_estimators()
                                  if hasattr(c, "transform") and n != "ClassicalMDS"])
def test_set_output_pandas(name):
    import pandas as pd
    X, y = small_data()
    est = make_estimator(name).set_output(transform="pandas")
    fit_estimator(est, X, y)
    out = est.transform(pd.DataFrame(X))
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(est.get_feature_names_out())


@pytest.mark.parametrize("name", ["PCA", "KernelPCA", "LinearDiscriminantAnalysis", "Isomap"])
def test_set_output_pandas_wraps_transform_and_fit_transform_once(name):
    # the wrapping comes from TransformerMixin alone (the estimators wrap nothing by hand)
    import pandas as pd
    X, y = small_data()
    frame = pd.DataFrame(X, index=np.arange(100, 100 + X.shape[0]))
    plain = make_estimator(name)
    expected = plain.fit_transform(X, y)
    est = make_estimator(name).set_output(transform="pandas")
    for out in (est.fit_transform(frame, y), est.transform(frame)):
        assert type(out) is pd.DataFrame
        assert list(out.index) == list(frame.index)
        assert list(out.columns) == list(est.get_feature_names_out())
        np.testing.assert_allclose(out.to_numpy(), expected, rtol=1e-6, atol=1e-8)
    if hasattr(est, "predict"):
        assert type(est.predict(frame)) is np.ndarray
        assert type(est.predict_proba(frame)) is np.ndarray


def _every_estimator_class():
    import fastdr
    import fastdr.dask

    found = []
    for package in (fastdr, fastdr.dask):
        for name in package.__all__:
            obj = getattr(package, name)
            if isinstance(obj, type) and hasattr(obj, "get_params"):
                found.append((f"{package.__name__}.{name}", obj))
    return found


@pytest.mark.parametrize(("name", "cls"), _every_estimator_class(),
                         ids=[n for n, _ in _every_estimator_class()])
def test_every_estimator_is_built_on_scikit_learns_base_classes(name, cls):
    from sklearn.base import (
        BaseEstimator,
        ClassifierMixin,
        RegressorMixin,
        TransformerMixin,
        is_classifier,
        is_regressor,
    )

    assert issubclass(cls, BaseEstimator), name
    # the mixin matches what the estimator does, so scikit-learn's helpers classify it
    assert is_classifier(cls()) == issubclass(cls, ClassifierMixin) == hasattr(
        cls, "predict_proba"), name
    assert is_regressor(cls()) == issubclass(cls, RegressorMixin), name
    if hasattr(cls, "transform") and not hasattr(cls, "kneighbors"):
        assert issubclass(cls, TransformerMixin), name
    # score, get_params, set_params and repr are scikit-learn's own, not copies
    for method in ("get_params", "set_params", "__repr__", "_repr_html_"):
        assert getattr(cls, method) is getattr(BaseEstimator, method), (name, method)
    if is_classifier(cls()):
        assert cls.score is ClassifierMixin.score, name
    if is_regressor(cls()):
        assert cls.score is RegressorMixin.score, name
