"""The three solvers of linear discriminant analysis, as scikit-learn 1.9 defines them.

* ``"svd"`` (:func:`svd_solution`): the rows centred on their class means and scaled by the
  within-class standard deviations, ``Z = (X - M_y) D^-1 / sqrt(m)``, are reduced to their
  R factor (:func:`fastdr.discriminant._class_scatter.within_r_factor`: CholeskyQR2 where Z is well
  enough conditioned for Householder accuracy, else a blocked QR that never forms the
  within-class covariance), whose SVD gives Z's singular values ``s`` and right vectors
  ``V``; directions with ``s > tol`` whiten the within-class scatter
  (``W = D^-1 V s^-1``). The prior-weighted class centroids in that whitened space are
  decomposed by a second SVD; its right vectors rotate ``W`` into ``scalings_`` (by
  decreasing between-class variance).
* ``"lsqr"`` (:func:`gaussian_scores` with :func:`least_squares_solve`): the Gaussian
  classifier ``S_w^-1 mu_k`` by least squares (the minimum-norm solution when ``S_w`` is
  singular), with ``S_w`` shrunk or given by a covariance estimator.
* ``"eigen"``: the generalized eigenproblem ``S_b w = lambda S_w w`` (in
  :mod:`fastdr.discriminant._lda`); :func:`total_minus_within` forms scikit-learn's ``S_b``,
  which is ``S_t - S_w`` with the same shrinkage (or estimator) applied to the total
  covariance ``S_t`` as to ``S_w``.
"""

import numpy as np
import scipy.linalg

from .._kernels.learners import class_stats
from .._runtime.threads import parallel_section
from ._class_scatter import (
    ledoit_wolf_shrunk,
    standardising_scales,
    within_r_factor,
)


def svd_solution(X, codes, counts, means, priors, tol, n_jobs=None):
    """Fit scikit-learn's ``"svd"`` solver from the class means (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (m, d)
    codes : ndarray of shape (m,), int
    counts : ndarray of shape (k,)
    means : ndarray of shape (k, d), float64
    priors : ndarray of shape (k,)
    tol : float
        Singular values of the scaled within-class data at or below ``tol`` are dropped;
        between-class singular values at or below ``tol`` times the largest too.
    n_jobs : int or None

    Returns
    -------
    dict
        ``scalings`` (d, r), ``xbar`` (d,), ``ratios`` (the between-class variance shares of
        every direction, decreasing), ``coef`` (k, d) and ``intercept`` (k,).

    Raises
    ------
    ValueError
        When no within-class singular value exceeds ``tol`` (nothing varies within the
        classes at that scale).

    Notes
    -----
    Time O(m d^2 + d^3), memory O(block d + d^2): no copy of X.
    """
    m, d = X.shape
    n_classes = means.shape[0]
    with parallel_section(n_jobs):
        sumsq = class_stats.class_centred_sumsq(X, codes, means)
    std = np.sqrt(sumsq.sum(axis=0) / m)
    std[std == 0] = 1.0
    R = within_r_factor(X, codes, counts, means, 1.0 / (std * np.sqrt(m)), n_jobs=n_jobs)
    _, s, vt = scipy.linalg.svd(R, full_matrices=False, check_finite=False)
    rank = int(np.sum(s > tol))
    if rank == 0:
        raise ValueError(
            f"The within-class scaled data have no singular value above tol={tol:g} (the "
            f"largest is {s[0] if s.size else 0.0:.3g}): nothing varies within the classes at "
            "that scale. Lower tol, or use solver='lsqr' or 'eigen' with shrinkage."
        )
    whitening = (vt[:rank] / std).T / s[:rank]
    xbar = priors @ means
    fac = 1.0 / (n_classes - 1)
    centroids = (np.sqrt(m * priors * fac)[:, None] * (means - xbar)) @ whitening
    _, s_between, vt_between = scipy.linalg.svd(centroids, full_matrices=False,
                                                check_finite=False)
    power = s_between**2
    total = power.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = power / total
    kept = int(np.sum(s_between > tol * s_between[0]))
    scalings = whitening @ vt_between.T[:, :kept]
    projected = (means - xbar) @ scalings
    with np.errstate(divide="ignore"):
        intercept = -0.5 * np.sum(projected**2, axis=1) + np.log(priors)
    coef = projected @ scalings.T
    intercept -= coef @ xbar
    return {"scalings": scalings, "xbar": xbar, "ratios": ratios, "coef": coef,
            "intercept": intercept}


def least_squares_solve(covariance):
    """``rhs -> lstsq(covariance, rhs)``: scikit-learn's ``"lsqr"`` solve (LAPACK
    ``gelsd``; the minimum-norm solution when the covariance is singular)."""

    def solve(rhs):
        return scipy.linalg.lstsq(covariance, rhs, check_finite=False)[0]

    return solve


def gaussian_scores(means, priors, solve):
    """The Gaussian classifier with shared covariance S, split for accurate predictions.

    Parameters
    ----------
    means : ndarray of shape (k, d)
    priors : ndarray of shape (k,)
    solve : callable
        ``rhs (d, n) -> S^-1 rhs`` (or its minimum-norm least-squares solution).

    Returns
    -------
    dict
        ``coef`` (k, d) ``= S^-1 mu_k`` and ``intercept`` (k,) ``= -mu_k^T S^-1 mu_k / 2 +
        log p_k`` (scikit-learn's ``coef_`` and ``intercept_`` before the two-class
        reduction); ``score_coef``, ``score_intercept`` and ``common``, with which
        ``decision_k(x) = x^T score_coef_k + score_intercept_k + common(x)``.

    Notes
    -----
    The scores split into a class-dependent part, computed in coordinates centred on
    ``c = sum_k p_k mu_k`` (``x' = x - c``, ``mu_k' = mu_k - c``), and a part common to all
    classes: ``decision_k(x) = [x'^T S^-1 mu_k' - mu_k'^T S^-1 mu_k' / 2 + log p_k] +
    [x'^T S^-1 c + c^T S^-1 c / 2]``. With X far from the origin (1e8) the uncentred terms
    ``mu_k^T S^-1 mu_k`` (1e16) cancel each other's digits and flip predictions; predictions
    use the class-dependent part only. ``common`` is ``(S^-1 c, c^T S^-1 c / 2)``.
    """
    n_classes = means.shape[0]
    centre = priors @ means
    centred_means = means - centre
    rhs = np.vstack([means, centred_means, centre[None, :]]).T
    solved = solve(rhs).T
    coef = solved[:n_classes]
    centred_coef = solved[n_classes:2 * n_classes]
    centre_coef = solved[-1]
    with np.errstate(divide="ignore"):
        log_priors = np.log(priors)
    centred_intercept = -0.5 * np.einsum("kd,kd->k", centred_means, centred_coef) + log_priors
    score_intercept = centred_intercept - centred_coef @ centre
    half_centre = 0.5 * float(centre @ centre_coef)
    return {"coef": coef, "intercept": score_intercept - half_centre,
            "score_coef": centred_coef, "score_intercept": score_intercept,
            "common": (centre_coef, half_centre)}


def total_minus_within(means, counts, within, shrinkage, *, raw_within=None, empirical=None,
                       fourth_moment=None):
    """scikit-learn's eigen-solver ``S_b = S_t - S_w``, from class statistics.

    ``S_t`` is the covariance of all of X shrunk as ``S_w`` is. Unshrunk, with empirical
    priors, it is the textbook ``sum_k (n_k/m) (mu_k - xbar)(mu_k - xbar)^T``; otherwise it
    also holds ``E - S_w`` with ``E = sum_k (n_k/m) C_k`` the within-class covariance with
    empirical weights.

    Parameters
    ----------
    means : ndarray of shape (k, d)
    counts : ndarray of shape (k,)
    within : ndarray of shape (d, d)
        ``S_w`` as used (shrunk).
    shrinkage : None, float or "auto"
    raw_within : ndarray of shape (d, d) or None
        ``sum_k p_k C_k`` before shrinkage; None when the priors are the class frequencies
        (then it is ``E``). Not used with ``"auto"``.
    empirical : ndarray of shape (d, d) or None
        ``E``; needed with ``"auto"`` and with ``raw_within``.
    fourth_moment : callable or None
        ``(centre, inv_scale) -> sum_i |(x_i - centre) * inv_scale|^4`` over all rows, for
        ``"auto"`` (Ledoit-Wolf on the standardised total data).

    Returns
    -------
    ndarray of shape (d, d), symmetric
    """
    m = counts.sum()
    d = means.shape[1]
    weights = counts / m
    xbar = weights @ means
    offsets = (means - xbar) * np.sqrt(weights)[:, None]
    between = offsets.T @ offsets
    if shrinkage == "auto":
        total = empirical + between
        variances = np.diag(total)
        scale = standardising_scales(variances[None, :], np.array([m]), xbar[None, :])[0]
        standardised = total / np.outer(scale, scale)
        shrunk = ledoit_wolf_shrunk(standardised, fourth_moment(xbar, 1.0 / scale), int(m))
        out = np.outer(scale, scale) * shrunk - within
    else:
        out = between if raw_within is None else between + (empirical - raw_within)
        if shrinkage is not None:
            # shrinkage is linear: shrunk(S_t) - shrunk(S_w) = shrunk(S_t - S_w)
            trace = np.trace(out)
            out = (1.0 - shrinkage) * out
            out.flat[:: d + 1] += shrinkage * trace / d
    return 0.5 * (out + out.T)


def estimated_covariance(estimator, X):
    """``estimator.fit(X).covariance_`` as a 2-D float64 array (scikit-learn's ``_cov``)."""
    estimator.fit(X)
    if not hasattr(estimator, "covariance_"):
        raise ValueError(
            f"{type(estimator).__name__} does not have a covariance_ attribute after fit. "
            "Pass a covariance estimator (such as sklearn.covariance.LedoitWolf) whose fit "
            "sets covariance_."
        )
    return np.atleast_2d(np.asarray(estimator.covariance_, dtype=np.float64))


def estimator_within(estimator, X, codes, priors):
    """``sum_k p_k C_k`` with each class's covariance ``C_k`` from ``estimator`` (fitted on
    each class's rows in turn, as scikit-learn does; those rows are copied)."""
    d = X.shape[1]
    within = np.zeros((d, d), dtype=np.float64)
    for k in range(priors.shape[0]):
        within += priors[k] * estimated_covariance(estimator, X[codes == k])
    return within
