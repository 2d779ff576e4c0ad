"""Estimator base classes: the scikit-learn contract, with scikit-learn's own output machinery.

``__init__`` only stores keyword-only parameters; ``get_params``/``set_params`` read them from
the signature, so ``sklearn.base.clone``, ``Pipeline`` and ``GridSearchCV`` work. Tags are
produced lazily (scikit-learn is imported only when scikit-learn itself asks for them).
"""

import functools
import inspect

import numpy as np
from sklearn.base import TransformerMixin as _SkTransformerMixin

#: methods whose metadata scikit-learn's routing can request (its ``SIMPLE_METHODS``)
_ROUTED_METHODS = ("fit", "partial_fit", "predict", "predict_proba", "predict_log_proba",
                   "decision_function", "score", "split", "transform", "inverse_transform")
_NOT_METADATA = {"X", "y", "Y", "Xt", "yt"}


def _metadata_params(function):
    """Names of the parameters of ``function`` that routing treats as metadata."""
    params = list(inspect.signature(function).parameters.values())[1:]
    return [p.name for p in params if p.name not in _NOT_METADATA
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]


@functools.cache
def _requester_for(cls):
    """A scikit-learn ``_MetadataRequester`` subclass with ``cls``'s routed methods, so that
    scikit-learn's own code builds and validates the requests (imported only when used)."""
    from sklearn.utils._metadata_requests import _MetadataRequester

    methods = {name: getattr(cls, name) for name in _ROUTED_METHODS
               if inspect.isfunction(getattr(cls, name, None))}
    return type(cls.__name__, (_MetadataRequester,), methods)


def _requester(estimator):
    proxy = object.__new__(_requester_for(type(estimator)))
    if "_metadata_request" in estimator.__dict__:
        proxy._metadata_request = estimator.__dict__["_metadata_request"]
    return proxy


def _make_set_request(method):
    def set_request(self, **kwargs):
        proxy = _requester(self)
        getattr(proxy, f"set_{method}_request")(**kwargs)
        self._metadata_request = proxy._metadata_request
        return self

    set_request.__name__ = f"set_{method}_request"
    set_request.__doc__ = f"""Request metadata passed to ``{method}`` (metadata routing).

        Only available when routing is enabled
        (``sklearn.set_config(enable_metadata_routing=True)``); scikit-learn validates the
        requests.

        Parameters
        ----------
        **kwargs : bool, None or str
            Metadata name mapped to True (request), False (do not request), None (error if
            passed) or an alias.

        Returns
        -------
        self
        """
    return set_request


class BaseEstimator:
    """Parameter handling, ``repr``, tags and metadata routing shared by every fastdr
    estimator."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for method in _ROUTED_METHODS:
            function = getattr(cls, method, None)
            name = f"set_{method}_request"
            if inspect.isfunction(function) and _metadata_params(function) and (
                    name not in cls.__dict__):
                setattr(cls, name, _make_set_request(method))

    def get_metadata_routing(self):
        """The metadata this estimator requests, as scikit-learn's ``MetadataRequest``.

        Returns
        -------
        sklearn.utils.metadata_routing.MetadataRequest
            Built by scikit-learn (imported here) from the signatures of ``fit``, ``score``
            and the other routed methods, and any ``set_*_request`` calls.
        """
        return _requester(self).get_metadata_routing()

    @classmethod
    def _get_param_names(cls):
        init = cls.__init__
        if init is object.__init__:
            return []
        params = inspect.signature(init).parameters.values()
        return sorted(p.name for p in params if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep=True):
        """Get the estimator's parameters.

        Parameters
        ----------
        deep : bool, default=True
            Also return the parameters of contained estimators (``name__param`` keys).

        Returns
        -------
        dict
            Parameter names mapped to their values.
        """
        out = {}
        for name in self._get_param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                for sub_name, sub_value in value.get_params().items():
                    out[f"{name}__{sub_name}"] = sub_value
            out[name] = value
        return out

    def set_params(self, **params):
        """Set the estimator's parameters; nested ones as ``name__param``.

        Parameters
        ----------
        **params : dict
            Parameter names and their new values.

        Returns
        -------
        self
        """
        valid = self.get_params(deep=True)
        nested = {}
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                    f"Valid parameters are: {sorted(self._get_param_names())}."
                )
            if sub:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
        for name, sub_params in nested.items():
            getattr(self, name).set_params(**sub_params)
        return self

    def __repr__(self):
        defaults = {
            p.name: p.default
            for p in inspect.signature(type(self).__init__).parameters.values()
            if p.default is not p.empty
        }
        shown = []
        for name in self._get_param_names():
            value = getattr(self, name, None)
            default = defaults.get(name, inspect.Parameter.empty)
            if _is_default(value, default):
                continue
            shown.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    @property
    def _repr_html_(self):
        """The notebook view, drawn by scikit-learn's ``estimator_html_repr``; absent (as
        scikit-learn's) when ``sklearn.set_config(display="text")``."""
        from sklearn import get_config

        if get_config()["display"] != "diagram":
            raise AttributeError("_repr_html_ is only defined when the 'display' "
                                 "configuration option is set to 'diagram'")
        from sklearn.utils import estimator_html_repr

        return lambda: estimator_html_repr(self)

    def _repr_mimebundle_(self, **kwargs):
        """Plain and (with ``display="diagram"``, the default) HTML views for Jupyter."""
        from sklearn import get_config
        from sklearn.utils import estimator_html_repr

        output = {"text/plain": repr(self)}
        if get_config()["display"] == "diagram":
            output["text/html"] = estimator_html_repr(self)
        return output

    def _fastdr_tags(self):
        """Tag overrides, as a dict applied by ``__sklearn_tags__``."""
        return {}

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, TargetTags

        tags = Tags(estimator_type=getattr(self, "_estimator_type", None),
                    target_tags=TargetTags(required=False))
        return _apply_tag_overrides(tags, self._tag_overrides())

    def _tag_overrides(self):
        overrides = {}
        for klass in reversed(type(self).__mro__):
            if "_fastdr_tags" in klass.__dict__:
                overrides.update(klass._fastdr_tags(self))
        return overrides


def _is_default(value, default):
    if default is inspect.Parameter.empty:
        return False
    if isinstance(value, np.ndarray) or isinstance(default, np.ndarray):
        return False
    try:
        return bool(value == default) and type(value) is type(default)
    except (TypeError, ValueError):
        return False


def _apply_tag_overrides(tags, overrides):
    for key, value in overrides.items():
        group, _, attr = key.partition(".")
        if attr:
            setattr(getattr(tags, group), attr, value)
        else:
            setattr(tags, key, value)
    return tags


class TransformerMixin(_SkTransformerMixin):
    """scikit-learn's ``TransformerMixin`` (its ``set_output`` machinery: the estimator's
    ``set_output(transform=...)`` and the global ``sklearn.set_config(transform_output=...)``,
    pandas or polars, exactly as scikit-learn's transformers), with fastdr's
    ``fit_transform``, tags and ``get_feature_names_out``."""

    _estimator_type = "transformer"

    def _fastdr_tags(self):
        return {"transformer_tags": _lazy_transformer_tags()}

    def __sklearn_tags__(self):
        # fastdr's BaseEstimator builds every tag, the transformer ones included (above);
        # scikit-learn's mixin would reset transformer_tags after the subclass overrides
        return BaseEstimator.__sklearn_tags__(self)

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


def _lazy_transformer_tags():
    from sklearn.utils import TransformerTags

    return TransformerTags()


class ClassifierMixin:
    """``score`` as mean accuracy."""

    _estimator_type = "classifier"

    def _fastdr_tags(self):
        from sklearn.utils import ClassifierTags, TargetTags

        return {"classifier_tags": ClassifierTags(), "target_tags": TargetTags(required=True)}

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of ``predict(X)`` against ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test samples, passed to ``predict``.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            True labels. With several outputs a sample counts as correct only when every
            output matches.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the samples in the average; None weighs them equally.

        Returns
        -------
        float
        """
        y = np.asarray(y)
        pred = self.predict(X)
        if y.shape[0] != pred.shape[0]:
            raise ValueError(
                f"X and y have inconsistent numbers of samples: {pred.shape[0]} and {y.shape[0]}."
            )
        correct = (pred == y).astype(np.float64)
        if correct.ndim > 1:
            correct = correct.all(axis=1)
        return float(np.average(correct, weights=sample_weight))


class RegressorMixin:
    """``score`` as the coefficient of determination R^2."""

    _estimator_type = "regressor"

    def _fastdr_tags(self):
        from sklearn.utils import RegressorTags, TargetTags

        return {"regressor_tags": RegressorTags(), "target_tags": TargetTags(required=True)}

    def score(self, X, y, sample_weight=None):
        """R^2 of ``predict(X)`` against ``y`` (averaged uniformly over outputs).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test samples, passed to ``predict``.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            True target values. An output whose targets are constant scores 0.
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights of the samples in the residual and total sums of squares (and in the
            mean of ``y``); None weighs them equally.

        Returns
        -------
        float
        """
        y = np.asarray(y, dtype=np.float64)
        pred = np.asarray(self.predict(X), dtype=np.float64).reshape(y.shape)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        resid = np.average((y - pred) ** 2, axis=0, weights=w)
        total = np.average((y - np.average(y, axis=0, weights=w)) ** 2, axis=0, weights=w)
        with np.errstate(divide="ignore", invalid="ignore"):
            r2 = np.where(total > 0, 1 - resid / np.where(total > 0, total, 1), 0.0)
        return float(np.mean(r2))
