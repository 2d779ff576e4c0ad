"""metric-learn's classifiers of triplets and quadruplets: whether the first pair of a tuple
is closer, in the learned metric, than the second.

A triplet ``(a, b, c)`` compares the pairs ``(a, b)`` and ``(a, c)``; a quadruplet
``(a, b, c, d)`` compares ``(a, b)`` and ``(c, d)``. A tuple is in the right order (label
+1) when its first pair is the closer one.
"""

import numpy as np

from .._validation.arrays import check_is_fitted, check_n_features
from .._validation.magnitudes import check_distance_magnitude
from ._tuples import form_tuples


def tuple_distances(learner, tuples, first, second, name):
    """The learned distances of two pairs of each formed tuple.

    Parameters
    ----------
    learner : fitted Mahalanobis learner
    tuples : ndarray of shape (n_tuples, size, n_features)
    first, second : tuple of two int
        The positions, within a tuple, of each pair's two points.
    name : str
        The calling method, for the messages.

    Returns
    -------
    d_first, d_second : ndarray of shape (n_tuples,)
        float64; each difference is taken before the map, as in ``pair_distance``.
    """
    check_n_features(learner, tuples[:, 0], name)
    check_distance_magnitude(tuples.reshape(-1, tuples.shape[2]), "tuples")
    P = np.asarray(learner.components_, dtype=np.float64).T
    out = []
    for i, j in (first, second):
        mapped = np.asarray(tuples[:, i] - tuples[:, j], dtype=np.float64) @ P
        out.append(np.sqrt(np.einsum("ij,ij->i", mapped, mapped)))
    return out


class _OrderClassifierMixin:
    """The shared methods; subclasses set ``_tuple_size`` and ``_second_pair``."""

    # metric-learn's (fixed) classes of tuple learners
    classes_ = np.array([0, 1])

    def decision_function(self, tuples):
        """The second pair's learned distance minus the first pair's, per tuple.

        Larger means more surely in the right order (label +1).

        Parameters
        ----------
        tuples : array-like of shape (n_tuples, size, n_features), or (n_tuples, size) of
            int with a preprocessor.

        Returns
        -------
        ndarray of shape (n_tuples,)
        """
        check_is_fitted(self, "components_")
        formed = form_tuples(getattr(self, "preprocessor_", None), tuples, self._tuple_size,
                             self._tuple_name, estimator=self)
        d_first, d_second = tuple_distances(self, formed, (0, 1), self._second_pair,
                                            "decision_function")
        return d_second - d_first

    def score(self, tuples):
        """The fraction of tuples predicted in the right order.

        A tie counts half for quadruplets, whose ``predict`` gives 0 on a tie (as
        metric-learn's).

        Parameters
        ----------
        tuples : array-like of shape (n_tuples, size, n_features), or (n_tuples, size) of
            int with a preprocessor.

        Returns
        -------
        float
        """
        return float(self.predict(tuples).mean() / 2 + 0.5)


class TripletsClassifierMixin(_OrderClassifierMixin):
    """``predict``, ``decision_function`` and ``score`` on triplets ``(a, b, c)``: +1 when
    ``a`` is closer to ``b`` than to ``c``."""

    _tuple_size = 3
    _tuple_name = "triplets"
    _second_pair = (0, 2)

    def predict(self, triplets):
        """+1 for each triplet whose first point is closer to the second than to the third.

        -1 otherwise, a tie included (as in metric-learn).

        Parameters
        ----------
        triplets : array-like of shape (n_triplets, 3, n_features), or (n_triplets, 3) of
            int with a preprocessor.

        Returns
        -------
        ndarray of shape (n_triplets,) of int
        """
        return np.where(self.decision_function(triplets) > 0, 1, -1)


class QuadrupletsClassifierMixin(_OrderClassifierMixin):
    """``predict``, ``decision_function`` and ``score`` on quadruplets ``(a, b, c, d)``: +1
    when the pair ``(a, b)`` is closer than ``(c, d)``."""

    _tuple_size = 4
    _tuple_name = "quadruplets"
    _second_pair = (2, 3)

    def predict(self, quadruplets):
        """The sign of :meth:`decision_function`.

        +1 when the first pair is the closer, -1 when the second is, 0 on a tie (as
        metric-learn's).

        Parameters
        ----------
        quadruplets : array-like of shape (n_quadruplets, 4, n_features), or
            (n_quadruplets, 4) of int with a preprocessor.

        Returns
        -------
        ndarray of shape (n_quadruplets,)
        """
        return np.sign(self.decision_function(quadruplets))
