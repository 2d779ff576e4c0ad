"""Checks of linear discriminant analysis: the class counts, the priors, a regular ``S_w``.

Shared by :class:`fastdr.LinearDiscriminantAnalysis` and its Dask twin, which compute the
same class statistics in one pass over a cluster.
"""

import warnings

import numpy as np
import scipy.linalg

from .._validation.arrays import check_array

#: A feature whose within-class variance is at most this share of its total variance is flat.
FLAT_RATIO = 1e-14


def check_class_counts(classes, counts, n_samples, shrinkage):
    """Refuse one class, too few samples, and single-sample classes under Ledoit-Wolf.

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
        The class labels, in the order of ``counts``.
    counts : ndarray of shape (n_classes,), int
        Samples per class.
    n_samples : int
    shrinkage : None, "auto" or float
        The estimator's ``shrinkage``; ``"auto"`` needs 2 samples in every class.

    Raises
    ------
    ValueError
        With the class or the counts at fault and what to pass instead.
    """
    n_classes = len(classes)
    if n_classes < 2:
        raise ValueError(
            f"LinearDiscriminantAnalysis needs at least 2 classes; y has a single class "
            f"({classes[0]!r}). Pass samples of two or more classes."
        )
    if n_samples <= n_classes:
        raise ValueError(
            f"The number of samples must be more than the number of classes (to estimate "
            f"the within-class scatter); got {n_samples} samples for {n_classes} classes. "
            "Pass more samples."
        )
    if shrinkage == "auto" and counts.min() < 2:
        lone = classes[int(np.argmin(counts))]
        raise ValueError(
            f"Class {lone!r} has 1 sample, but shrinkage='auto' (Ledoit-Wolf) estimates "
            "each class's covariance and needs at least 2 samples per class. Use "
            "shrinkage=None or a float, or pass more samples of that class."
        )


def check_priors(priors, counts, n_samples):
    """The class priors: the estimator's ``priors`` checked, or the class frequencies.

    Parameters
    ----------
    priors : array-like of shape (n_classes,) or None
        The estimator's ``priors`` parameter; None means ``counts / n_samples``.
    counts : ndarray of shape (n_classes,), int
        Samples per class.
    n_samples : int

    Returns
    -------
    ndarray of shape (n_classes,), float64
        Priors that sum to 1 (given priors that do not are rescaled, with a warning).
    """
    if priors is None:
        return counts / n_samples
    priors = check_array(priors, name="priors", ensure_2d=False, dtype=np.float64)
    if priors.ndim != 1 or priors.shape[0] != counts.shape[0]:
        raise ValueError(
            f"priors must hold one value per class ({counts.shape[0]} classes); got "
            f"shape {priors.shape}."
        )
    if (priors < 0).any():
        raise ValueError(f"priors must be non-negative; got {priors.tolist()}.")
    total = priors.sum()
    if total <= 0:
        raise ValueError("priors must not all be 0.")
    if abs(total - 1.0) > 1e-5:
        warnings.warn(f"The priors do not sum to 1. Renormalizing (they sum to "
                      f"{total:.6g}); pass priors that sum to 1 to silence this.",
                      UserWarning, stacklevel=3)
        priors = priors / total
    return priors


def check_within_regular(covariance, between_diag, tol):
    """Refuse a within-class scatter ``S_w`` that is singular or nearly so.

    Per feature and scale-free: a feature is flat when its within-class variance is below
    ``FLAT_RATIO`` of its own total (within + between) variance, so one feature in units
    1e12 times larger than the others does not make them look flat. Then the whole matrix:
    the ratio of the extreme eigenvalues of its correlation form ``D^-1/2 S_w D^-1/2``
    (``D = diag(S_w)``) must reach ``tol**2``. O(d^3).

    Parameters
    ----------
    covariance : ndarray of shape (n_features, n_features)
        ``S_w``.
    between_diag : ndarray of shape (n_features,)
        The diagonal of the textbook between-class scatter ``S_b``.
    tol : float
        The estimator's ``tol``.

    Raises
    ------
    numpy.linalg.LinAlgError
        Naming the flat features, or the relative singular value, and the remedies.
    """
    diag = np.diag(covariance)
    flat = np.flatnonzero(diag <= FLAT_RATIO * (diag + between_diag))
    if flat.size:
        raise np.linalg.LinAlgError(
            f"The within-class scatter S_w is singular: feature(s) {flat[:5].tolist()} "
            "do not vary within any class (within-class variance below "
            f"{FLAT_RATIO:g} of the feature's total variance), so S_w is not positive "
            "definite. Use shrinkage='auto' or "
            "a float, or solver='svd', or drop those features."
        )
    inv = 1.0 / np.sqrt(diag)
    corr = covariance * inv[:, None] * inv[None, :]
    values = scipy.linalg.eigvalsh(corr, check_finite=False)
    ratio = values[0] / values[-1]
    if ratio < tol**2:
        raise np.linalg.LinAlgError(
            f"The within-class scatter S_w is singular to working precision (relative "
            f"singular value {np.sqrt(max(ratio, 0.0)):.3g} < tol={tol:g}); there "
            "are fewer independent samples than features, or collinear features. Use "
            "shrinkage='auto' or a float to regularise it, or solver='svd' (or lower tol)."
        )
