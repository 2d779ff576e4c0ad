"""metric-learn's classifier of pairs: +1 (similar) when a pair's distance is within a
threshold, -1 otherwise; the threshold is set by hand or calibrated on labelled pairs."""

from numbers import Real

import numpy as np

from .._validation.arrays import check_is_fitted
from ._constraints import check_pair_labels
from ._tuples import form_pairs

STRATEGIES = ("accuracy", "f_beta", "max_tpr", "max_tnr")


class PairsClassifierMixin:
    """``predict``, ``decision_function``, ``score``, ``set_threshold`` and
    ``calibrate_threshold`` on pairs, as metric-learn's pair learners have them.

    The decision function is ``pair_score`` (minus the distance); a pair is predicted similar
    (+1) when its distance is at most ``threshold_``.
    """

    #: points per tuple: 2, pairs (metric-learn's attribute, which its tests read)
    _tuple_size = 2

    @staticmethod
    def _validate_calibration_params(strategy="accuracy", min_rate=None, beta=1.0):
        """Check the parameters of :meth:`calibrate_threshold` (metric-learn's private check
        of the same name, which its tests call; fits check ``calibration_params`` with it).

        Parameters
        ----------
        strategy : {"accuracy", "f_beta", "max_tpr", "max_tnr"}, default="accuracy"
        min_rate : float in [0, 1] or None
            Required for "max_tpr" and "max_tnr".
        beta : float, default=1.0
            For "f_beta".

        Raises
        ------
        ValueError
            With metric-learn's message, for a value out of its domain.
        """
        _check_calibration(strategy, min_rate, beta)

    def decision_function(self, pairs):
        """Minus the learned distance of each pair: larger means more similar.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2) of int

        Returns
        -------
        ndarray of shape (n_pairs,)
        """
        return self.pair_score(pairs)

    def predict(self, pairs):
        """+1 for each pair within ``threshold_``, -1 for the others.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2) of int

        Returns
        -------
        ndarray of shape (n_pairs,) of int
        """
        check_is_fitted(self, "components_")
        if "threshold_" not in vars(self):
            raise AttributeError("A threshold for this estimator has not been set, call its "
                                 "set_threshold or calibrate_threshold method.")
        return np.where(-self.decision_function(pairs) <= self.threshold_, 1, -1)

    def score(self, pairs, y):
        """The area under the ROC curve of the decision function on labelled pairs.

        Parameters
        ----------
        pairs : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2) of int
        y : array-like of shape (n_pairs,)
            +1 / -1.

        Returns
        -------
        float
        """
        from sklearn.metrics import roc_auc_score

        return float(roc_auc_score(y, self.decision_function(pairs)))

    def set_threshold(self, threshold):
        """Set the distance below which a pair is predicted similar.

        Parameters
        ----------
        threshold : float

        Returns
        -------
        self
        """
        check_is_fitted(self, "components_")
        if isinstance(threshold, bool) or not isinstance(threshold, Real):
            raise ValueError(f"Parameter threshold must be a real number. Got "
                             f"{type(threshold)} instead.")
        if np.isnan(threshold):
            raise ValueError("Parameter threshold must be a real number. Got nan instead.")
        self.threshold_ = float(threshold)
        return self

    def calibrate_threshold(self, pairs_valid, y_valid, strategy="accuracy", min_rate=None,
                            beta=1.0):
        """Choose ``threshold_`` on labelled pairs, by one of metric-learn's strategies.

        Parameters
        ----------
        pairs_valid : array-like of shape (n_pairs, 2, n_features), or (n_pairs, 2) of int
        y_valid : array-like of shape (n_pairs,)
            +1 / -1.
        strategy : {"accuracy", "f_beta", "max_tpr", "max_tnr"}, default="accuracy"
            Maximise the accuracy, or the F-beta score, or the true positive rate with a true
            negative rate of at least ``min_rate``, or the true negative rate with a true
            positive rate of at least ``min_rate``.
        min_rate : float in [0, 1] or None
            Required for "max_tpr" and "max_tnr".
        beta : float, default=1.0
            For "f_beta".

        Returns
        -------
        self
        """
        from sklearn.metrics import precision_recall_curve, roc_curve

        check_is_fitted(self, "components_")
        self._validate_calibration_params(strategy, min_rate, beta)
        pairs = form_pairs(getattr(self, "preprocessor_", None), pairs_valid, "pairs_valid",
                           estimator=self)
        y = check_pair_labels(y_valid, pairs.shape[0])
        if strategy != "accuracy" and np.unique(y).size < 2:
            raise ValueError(f"Strategy {strategy!r} needs both similar (+1) and dissimilar (-1) "
                             "pairs in y_valid; it has only one kind.")
        scores = self.decision_function(pairs)
        if strategy == "accuracy":
            order = np.argsort(scores, kind="stable")[::-1]
            ranked = np.concatenate([[scores[order[0]] + 1.0], scores[order]])
            labels = y[order]
            # accept the first i pairs: correct are the +1 among them and the -1 after them
            accepted_pos = np.concatenate([[0.0], np.cumsum(labels == 1)])
            rejected_neg = np.concatenate([[0.0], np.cumsum((labels == -1)[::-1])])[::-1]
            best = int(np.argmax(accepted_pos + rejected_neg))
            self.threshold_ = -float(ranked[best])
        elif strategy == "f_beta":
            precision, recall, thresholds = precision_recall_curve(y, scores, pos_label=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                f_beta = ((1 + beta ** 2) * precision * recall
                          / (beta ** 2 * precision + recall))
            f_beta[np.isnan(f_beta)] = 0.0
            # the curve's last point (recall 0) has no threshold
            self.threshold_ = -float(thresholds[np.argmax(f_beta[:thresholds.size])])
        else:
            fpr, tpr, thresholds = roc_curve(y, scores, pos_label=1)
            if strategy == "max_tpr":
                kept = np.flatnonzero(1 - fpr >= min_rate)
                best = kept[np.argmax(tpr[kept])]
            else:
                kept = np.flatnonzero(tpr >= min_rate)
                best = kept[np.argmax(1 - fpr[kept])]
            self.threshold_ = -float(thresholds[best])
        return self


def check_calibration_params(params):
    """A fit's ``calibration_params``, checked before the fit (a dict, or None for the
    defaults); returns the dict to pass to ``calibrate_threshold``."""
    params = dict(params or {})
    unknown = sorted(set(params) - {"strategy", "min_rate", "beta"})
    if unknown:
        # metric-learn's error class: its check takes the dict as keyword arguments
        raise TypeError(f"Unknown calibration parameters {unknown}; calibrate_threshold takes "
                        "strategy, min_rate and beta.")
    PairsClassifierMixin._validate_calibration_params(**params)
    return params


def _check_calibration(strategy, min_rate, beta):
    """The check of :meth:`PairsClassifierMixin._validate_calibration_params`.

    The messages are metric-learn's, word for word (its tests compare them by equality; the
    missing space in "in[0, 1]" is its own).
    """
    if strategy not in STRATEGIES:
        raise ValueError(f'Strategy can either be "accuracy", "f_beta" or "max_tpr" or '
                         f'"max_tnr". Got "{strategy}" instead.')
    if strategy in ("max_tpr", "max_tnr"):
        if (min_rate is None or isinstance(min_rate, bool) or not isinstance(min_rate, Real)
                or not 0 <= min_rate <= 1):
            raise ValueError(f"Parameter min_rate must be a number in[0, 1]. Got {min_rate} "
                             "instead.")
    if strategy == "f_beta" and (isinstance(beta, bool) or not isinstance(beta, Real)):
        raise ValueError(f"Parameter beta must be a real number. Got {type(beta)} instead.")
