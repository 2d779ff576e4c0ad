"""Estimator base classes: scikit-learn's own, with fastdr's tag overrides.

Every fastdr estimator is a ``sklearn.base.BaseEstimator``: parameters (``get_params``,
``set_params``, ``clone``), ``repr`` and the notebook view, pickling, metadata routing (the
``set_*_request`` methods) and the ``set_output`` machinery are scikit-learn's. fastdr adds
one hook: a class may define ``_fastdr_tags`` returning tag overrides (``{"input_tags.sparse":
True}``), applied after scikit-learn's mixins have set theirs.
"""

import numpy as np
from sklearn.base import BaseEstimator as _SkBaseEstimator
from sklearn.base import ClassifierMixin as _SkClassifierMixin
from sklearn.base import RegressorMixin as _SkRegressorMixin
from sklearn.base import TransformerMixin as _SkTransformerMixin


def _tag_overrides(estimator):
    """The ``_fastdr_tags`` of every class in the MRO, the most derived last."""
    overrides = {}
    for klass in reversed(type(estimator).__mro__):
        if "_fastdr_tags" in klass.__dict__:
            overrides.update(klass._fastdr_tags(estimator))
    return overrides


def _with_overrides(estimator, tags):
    return _apply_tag_overrides(tags, _tag_overrides(estimator))


class BaseEstimator(_SkBaseEstimator):
    """scikit-learn's ``BaseEstimator`` with fastdr's tag overrides (``_fastdr_tags``)."""

    def _fastdr_tags(self):
        """Tag overrides, as a dict applied by ``__sklearn_tags__``."""
        return {}

    def __sklearn_tags__(self):
        return _with_overrides(self, super().__sklearn_tags__())


def _apply_tag_overrides(tags, overrides):
    """Set ``overrides`` on ``tags``, skipping groups not created yet.

    Each level of the MRO applies the overrides again after its own tags: a group such as
    ``transformer_tags`` exists only once its scikit-learn mixin has run, and the outermost
    class's ``__sklearn_tags__`` applies last, when every group exists.
    """
    for key, value in overrides.items():
        group, _, attr = key.partition(".")
        if attr:
            if getattr(tags, group) is not None:
                setattr(getattr(tags, group), attr, value)
        else:
            setattr(tags, key, value)
    return tags


class TransformerMixin(_SkTransformerMixin):
    """scikit-learn's ``TransformerMixin`` (its ``set_output`` machinery: the estimator's
    ``set_output(transform=...)`` and the global ``sklearn.set_config(transform_output=...)``,
    pandas or polars, exactly as scikit-learn's transformers), with fastdr's
    ``fit_transform`` and ``get_feature_names_out``."""

    def __sklearn_tags__(self):
        # scikit-learn's mixin resets transformer_tags: the overrides go on top again
        return _with_overrides(self, super().__sklearn_tags__())

    def fit_transform(self, X, y=None, **fit_params):
        """Fit to ``X`` and return the transformed training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored or array-like
            Passed to ``fit`` for supervised transformers.
        **fit_params : dict
            Passed to ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            Or a DataFrame, as ``set_output`` or ``sklearn.set_config`` choose.
        """
        return self.fit(X, y, **fit_params).transform(X)

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns: ``<classname>0``, ``<classname>1``, ...

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Only checked against the input seen in ``fit``, as scikit-learn does: the
            feature names (when ``fit`` saw a DataFrame) or their number.

        Returns
        -------
        ndarray of str
        """
        n_out = self._n_features_out()
        if input_features is not None:
            _check_input_features(self, input_features)
        prefix = type(self).__name__.lower()
        return np.asarray([f"{prefix}{i}" for i in range(n_out)], dtype=object)

    def _n_features_out(self):
        for attr in ("n_components_", "embedding_", "components_"):
            if hasattr(self, attr):
                value = getattr(self, attr)
                return int(value) if np.isscalar(value) else (
                    value.shape[1] if attr == "embedding_" else value.shape[0]
                )
        raise AttributeError("The estimator is not fitted.")


def _check_input_features(estimator, input_features):
    """scikit-learn's rule for ``input_features``: equal to ``feature_names_in_`` when fit
    saw names, else of length ``n_features_in_``."""
    input_features = np.asarray(input_features, dtype=object)
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None and not np.array_equal(names, input_features):
        raise ValueError("input_features is not equal to feature_names_in_")
    n_in = getattr(estimator, "n_features_in_", None)
    if n_in is not None and len(input_features) != n_in:
        raise ValueError(f"input_features should have length equal to number of features "
                         f"({n_in}), got {len(input_features)}")


class ClassifierMixin(_SkClassifierMixin):
    """scikit-learn's ``ClassifierMixin`` (``score`` as mean accuracy), with fastdr's tag
    overrides on top of its classifier tags."""

    def __sklearn_tags__(self):
        return _with_overrides(self, super().__sklearn_tags__())


class RegressorMixin(_SkRegressorMixin):
    """scikit-learn's ``RegressorMixin`` (``score`` as the coefficient of determination
    R^2), with fastdr's tag overrides on top of its regressor tags."""

    def __sklearn_tags__(self):
        return _with_overrides(self, super().__sklearn_tags__())
