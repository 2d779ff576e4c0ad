"""Scatter statistics of linear discriminant analysis: per-class scatter, Ledoit-Wolf, the
R factor of the within-class centred data.

Rows are never copied per class: scatter matrices (and the R factor) are accumulated from
small row blocks (gathered and centred by numba, multiplied or factorised by BLAS/LAPACK).
"""

from contextlib import nullcontext

import numpy as np
import scipy.linalg

from .. import _config as config
from .._config import scatter_block_rows
from .._kernels.learners import class_stats
from .._runtime.blas import single_threaded_blas
from .._runtime.threads import parallel_section


def products_on_one_thread(d):
    """``single_threaded_blas()`` while the scatter loops' per-block products are small:
    a block's ``B^T B`` below ``LDA_SINGLE_THREAD_BLAS_MAX_WORK`` multiply-adds (else a null
    context).

    Such a product is faster on one thread than on two, and on two it could stall:
    OpenBLAS's caller spins for its helper, and on a 2-core machine the helper can be queued
    on the caller's own core, so both run by turns while the other core idles
    (``/proc/self/task/*/schedstat`` shows it). Bench: lda.
    """
    if scatter_block_rows(d) * d * d <= config.LDA_SINGLE_THREAD_BLAS_MAX_WORK:
        return single_threaded_blas()
    return nullcontext()


def gather_centre(X, order, start, centre, inv_scale, out, sq_norms, n_jobs):
    """``out[r] = (X[order[start + r]] - centre) * inv_scale`` and its squared row norms.

    A block of fewer than ``GATHER_PARALLEL_MIN_ELEMENTS`` elements is gathered on the
    calling thread: the BLAS product that follows each block leaves numpy's OpenBLAS workers
    spinning, and a numba launch between two such products shares the cores with them
    (bench: lda). Larger blocks run on ``n_jobs`` threads.
    """
    if out.size < config.GATHER_PARALLEL_MIN_ELEMENTS:
        class_stats.gather_centre_rows(X, order, start, centre, inv_scale, out, sq_norms, 0,
                                       out.shape[0])
        return
    with parallel_section(n_jobs):
        class_stats.gather_centre_block(X, order, start, centre, inv_scale, out, sq_norms)


def class_scatter(X, codes, counts, means, weights, inv_scales=None, n_jobs=None):
    """Per-class scatter matrices combined with weights, from row blocks fed to BLAS.

    Rows are visited class by class through one stable ordering of the class codes (no
    per-class copy of X): each block of a class's rows is gathered, centred on the class mean
    and scaled (numba), then ``B^T B`` accumulates the class's scatter (BLAS syrk).

    Parameters
    ----------
    X : ndarray of shape (m, d)
    codes : ndarray of shape (m,), int
    counts : ndarray of shape (k,)
    means : ndarray of shape (k, d), float64
    weights : ndarray of shape (k,)
        The result is ``sum_k weights[k] * S_k`` with ``S_k`` the (scaled) class scatter.
    inv_scales : ndarray of shape (k, d) or None
        Per-class feature scales applied before the scatter (for Ledoit-Wolf).
    n_jobs : int or None
        Threads of the gathering kernel.

    Returns
    -------
    total : ndarray of shape (d, d), float64
        The weighted sum (when ``inv_scales`` is None) or None.
    per_class : list of (scatter, fourth_moment) or None
        With ``inv_scales``: each class's scaled scatter and ``sum_i |z_i|^4``.

    Notes
    -----
    Time O(m d^2), memory O(d^2 + block d) (plus k d^2 with ``inv_scales``).
    """
    d = X.shape[1]
    order, starts, buffers = _class_layout(X, codes, counts)
    total = np.zeros((d, d), dtype=np.float64) if inv_scales is None else None
    per_class = [] if inv_scales is not None else None
    ones = np.ones(d, dtype=np.float64)
    with products_on_one_thread(d):
        for k in range(len(counts)):
            if inv_scales is None:
                scale = ones * np.sqrt(weights[k])
            else:
                scale = inv_scales[k]
            scatter = total if inv_scales is None else np.zeros((d, d), dtype=np.float64)
            fourth = _add_class_scatter(X, order, starts[k], starts[k + 1], means[k], scale,
                                        buffers, scatter, n_jobs)
            if inv_scales is not None:
                per_class.append((scatter, fourth))
    if total is not None:
        total = 0.5 * (total + total.T)
    return total, per_class


def _class_order(codes, counts):
    """The rows in class order, and each class's start in that order (k + 1 entries)."""
    return np.argsort(codes, kind="stable"), np.concatenate(([0], np.cumsum(counts)))


def _class_layout(X, codes, counts):
    """:func:`_class_order` and the float64 row-block buffers ``(block, norms)`` of
    :func:`_add_class_scatter`."""
    m, d = X.shape
    rows = max(1, min(scatter_block_rows(d), m))
    order, starts = _class_order(codes, counts)
    return order, starts, (np.empty((rows, d), dtype=np.float64), np.empty(rows))


def _add_class_scatter(X, order, start, stop, mean, scale, buffers, scatter, n_jobs,
                       right=None):
    """Add ``Z^T Z`` to ``scatter`` for the class's rows ``order[start:stop]`` centred on
    ``mean`` and scaled by ``scale`` (Z), a buffer of rows at a time; return
    ``sum_i |z_i|^4``. With a d x d matrix ``right``, add ``(Z right)^T (Z right)`` instead
    (and the returned sum is still Z's)."""
    buf, norms = buffers
    fourth = 0.0
    for first in range(start, stop, buf.shape[0]):
        size = min(stop, first + buf.shape[0]) - first
        block = buf[:size]
        gather_centre(X, order, first, mean, scale, block, norms[:size], n_jobs)
        if right is not None:
            block = block @ right
        scatter += block.T @ block
        fourth += float(np.dot(norms[:size], norms[:size]))
    return fourth


def class_scatter_pair(X, codes, counts, means, weights_a, weights_b, n_jobs=None):
    """Two weighted sums of the class scatter matrices from one pass over the rows.

    Each class's (unweighted) scatter is accumulated from row blocks into one d x d buffer,
    as in :func:`class_scatter`, then added to both sums: O(d^2) memory whatever the number
    of classes (never one matrix per class).

    Parameters
    ----------
    X : ndarray of shape (m, d)
    codes : ndarray of shape (m,), int
    counts : ndarray of shape (k,)
    means : ndarray of shape (k, d), float64
    weights_a, weights_b : ndarray of shape (k,)
    n_jobs : int or None

    Returns
    -------
    total_a, total_b : ndarray of shape (d, d), float64
        ``sum_k weights[k] * S_k``, symmetrised.

    Notes
    -----
    Time O(m d^2 + k d^2), memory O(d^2 + block d).
    """
    d = X.shape[1]
    order, starts, buffers = _class_layout(X, codes, counts)
    ones = np.ones(d, dtype=np.float64)
    scatter = np.empty((d, d), dtype=np.float64)
    total_a = np.zeros((d, d), dtype=np.float64)
    total_b = np.zeros((d, d), dtype=np.float64)
    with products_on_one_thread(d):
        for k in range(len(counts)):
            scatter[:] = 0.0
            _add_class_scatter(X, order, starts[k], starts[k + 1], means[k], ones, buffers,
                               scatter, n_jobs)
            total_a += weights_a[k] * scatter
            total_b += weights_b[k] * scatter
    return 0.5 * (total_a + total_a.T), 0.5 * (total_b + total_b.T)


def ledoit_wolf_shrinkage(emp_cov, fourth_moment, n_samples):
    """Ledoit-Wolf shrinkage intensity of centred data from its covariance.

    Parameters
    ----------
    emp_cov : ndarray of shape (d, d)
        ``Z^T Z / n`` of the centred data Z.
    fourth_moment : float
        ``sum_i |z_i|^4``.
    n_samples : int

    Returns
    -------
    shrinkage : float in [0, 1]
    mu : float
        ``trace(emp_cov) / d``, the target's scale.

    Notes
    -----
    Ledoit and Wolf (2004): ``beta = (sum_i |z_i|^4 / n - |S|_F^2) / (d n)``,
    ``delta = |S - mu I|_F^2 / d``, shrinkage ``min(beta, delta) / delta``; the same
    estimate as ``sklearn.covariance.ledoit_wolf_shrinkage``. One feature gives 0.
    """
    d = emp_cov.shape[0]
    mu = float(np.trace(emp_cov)) / d
    if d == 1:
        return 0.0, mu
    frob = float(np.sum(emp_cov * emp_cov))
    beta = (fourth_moment / n_samples - frob) / (d * n_samples)
    delta = (frob - 2.0 * mu * float(np.trace(emp_cov)) + d * mu * mu) / d
    beta = min(beta, delta)
    shrinkage = 0.0 if beta == 0 else beta / delta
    return float(shrinkage), mu


def ledoit_wolf_shrunk(emp_cov, fourth_moment, n_samples):
    """``(1 - s) emp_cov + s mu I``, the covariance shrunk by Ledoit-Wolf (a new array).

    ``s`` and ``mu`` are :func:`ledoit_wolf_shrinkage`'s, from the same arguments.
    """
    d = emp_cov.shape[0]
    s, mu = ledoit_wolf_shrinkage(emp_cov, fourth_moment, n_samples)
    shrunk = (1.0 - s) * emp_cov
    shrunk.flat[:: d + 1] += s * mu
    return shrunk


def shrink_to_scaled_identity(covariance, shrinkage):
    """``(1 - shrinkage) S + shrinkage tr(S) / d I``, in place on S (a fixed shrinkage).

    Shared by the in-memory and the Dask LDA. Returns ``covariance``.
    """
    d = covariance.shape[0]
    target = np.trace(covariance) / d
    covariance *= 1.0 - shrinkage
    covariance.flat[:: d + 1] += shrinkage * target
    return covariance


def standardising_scales(variances, counts, means):
    """Per-class feature scales for Ledoit-Wolf on standardised data.

    Parameters
    ----------
    variances : ndarray of shape (n_classes, d)
        Each class's per-feature variance (divided by the class count).
    counts : ndarray of shape (n_classes,)
    means : ndarray of shape (n_classes, d)

    Returns
    -------
    ndarray of shape (n_classes, d)
        The standard deviations, with 1 for features that are constant within a class (to
        round-off of their mean) or below ``10 eps``, which are left unscaled.
    """
    eps = np.finfo(np.float64).eps
    n = counts[:, None].astype(np.float64)
    constant = variances <= n * eps * variances + (n * means * eps) ** 2
    scales = np.sqrt(variances)
    scales[constant | (scales < 10 * eps)] = 1.0
    return scales


def ledoit_wolf_within(per_class, counts, scales, priors):
    """The within-class covariance with each class shrunk by Ledoit-Wolf.

    Parameters
    ----------
    per_class : list of (ndarray of shape (d, d), float)
        Each class's scatter and fourth moment of its standardised, centred data
        (:func:`class_scatter` with ``inv_scales``).
    counts : ndarray of shape (n_classes,)
    scales : ndarray of shape (n_classes, d)
        From :func:`standardising_scales`.
    priors : ndarray of shape (n_classes,)

    Returns
    -------
    ndarray of shape (d, d)
        ``sum_k p_k D_k shrunk_k D_k`` (symmetrised), as scikit-learn's eigen solver.
    """
    d = scales.shape[1]
    covariance = np.zeros((d, d), dtype=np.float64)
    for k, (scatter, fourth) in enumerate(per_class):
        shrunk = ledoit_wolf_shrunk(scatter / counts[k], fourth, int(counts[k]))
        covariance += priors[k] * (scales[k][:, None] * shrunk * scales[k][None, :])
    return 0.5 * (covariance + covariance.T)


def within_r_factor(X, codes, counts, means, inv_scale, n_jobs=None):
    """The R factor of the within-class centred, scaled rows: CholeskyQR2, else a blocked QR.

    ``Z`` stacks the rows ``(x_i - mu_{y_i}) * inv_scale`` (class by class); the result
    ``R`` (upper trapezoidal, ``min(m, d) x d``) has ``R^T R = Z^T Z``, so it has Z's
    singular values and right singular vectors. Where Z is well enough conditioned
    (:func:`_cholesky_qr2`), R comes from two Cholesky factorisations of Gram matrices,
    which are level-3 BLAS products; otherwise from a blocked Householder QR (TSQR), which
    never forms ``Z^T Z``. For TSQR, blocks of rows are gathered and centred by numba (no
    copy of X), stacked under the current R and factorised again (LAPACK ``geqrf``). Both
    give R to about the unit roundoff times Z's norm; their rows may differ in sign.

    Parameters
    ----------
    X : ndarray of shape (m, d)
    codes : ndarray of shape (m,), int
    counts : ndarray of shape (k,)
    means : ndarray of shape (k, d), float64
    inv_scale : ndarray of shape (d,), float64
        Column scale applied after centring.
    n_jobs : int or None
        Threads of the gathering kernel.

    Returns
    -------
    ndarray of shape (min(m, d), d), float64

    Notes
    -----
    Time O(m d^2) (CholeskyQR2: about 3 m d^2 flops in BLAS products; TSQR: about
    2 m d^2 in LAPACK's unblocked steps for small d, plus O(d^3) per block of at least 4 d
    rows), memory O(block d + d^2).
    """
    m, d = X.shape
    if m >= d:
        R = _cholesky_qr2(X, codes, counts, means, inv_scale, n_jobs)
        if R is not None:
            return R
    rows = min(m, max(scatter_block_rows(d), 4 * d))
    order, starts = _class_order(codes, counts)
    stack = np.empty((min(m, d) + rows, d), dtype=np.float64)
    norms = np.empty(rows, dtype=np.float64)
    r_rows = 0  # rows of the current R, at the top of ``stack``
    filled = 0  # gathered rows below it
    for k in range(len(counts)):
        start = starts[k]
        while start < starts[k + 1]:
            take = min(starts[k + 1] - start, rows - filled)
            at = r_rows + filled
            gather_centre(X, order, start, means[k], inv_scale, stack[at: at + take],
                          norms[:take], n_jobs)
            start += take
            filled += take
            if filled == rows:
                r_rows = _refactor(stack, r_rows + filled)
                filled = 0
    if filled or r_rows == 0:
        r_rows = _refactor(stack, r_rows + filled)
    return np.triu(stack[:r_rows])


def _cholesky_qr2(X, codes, counts, means, inv_scale, n_jobs):
    """R of :func:`within_r_factor` by CholeskyQR2, or None when Z is too ill-conditioned.

    ``R1 = chol(Z^T Z)``, then ``R2 = chol((Z R1^-1)^T (Z R1^-1))`` from a second pass over
    the rows, and ``R = R2 R1``. The first factor carries the Gram matrix's rounding (about
    ``u cond(Z)^2``); the second pass, on nearly orthonormal columns, removes it, so R is as
    accurate as Householder's when ``8 cond(Z) sqrt(m d u + d (d + 1) u) <= 1``
    (Yamamoto, Nakatsukasa, Yanagisawa and Fukaya, 2015, "Roundoff error analysis of the
    CholeskyQR2 algorithm"; u the unit roundoff). That condition is checked with the
    2-norm condition number of ``R1`` (Z's, to the accuracy that matters for the check),
    and None is returned when it fails or a Cholesky factorisation breaks down.

    It is faster than TSQR at every size measured (bench: lda_svd).
    """
    m, d = X.shape
    order, starts, buffers = _class_layout(X, codes, counts)
    unit = np.finfo(np.float64).eps / 2
    limit = 1.0 / (8.0 * np.sqrt(m * d * unit + d * (d + 1) * unit))
    factor = None
    right = None
    for _ in range(2):
        gram = np.zeros((d, d), dtype=np.float64)
        with products_on_one_thread(d):
            for k in range(len(counts)):
                _add_class_scatter(X, order, starts[k], starts[k + 1], means[k], inv_scale,
                                   buffers, gram, n_jobs, right=right)
        try:
            step = scipy.linalg.cholesky(0.5 * (gram + gram.T), lower=False,
                                         check_finite=False)
        except scipy.linalg.LinAlgError:
            return None
        if factor is None:
            singular = scipy.linalg.svdvals(step, check_finite=False)
            if not singular[-1] * limit > singular[0]:  # also False for NaN or inf
                return None
            factor = step
            right = scipy.linalg.solve_triangular(step, np.eye(d), check_finite=False)
        else:
            factor = np.triu(step @ factor)
    return factor


def _refactor(stack, n_rows):
    """QR of ``stack[:n_rows]``; its R goes back to the top of ``stack``. Returns R's rows."""
    (R,) = scipy.linalg.qr(stack[:n_rows], mode="r", check_finite=False)
    r_rows = min(R.shape)
    stack[:r_rows] = R[:r_rows]
    return r_rows


def centred_fourth_moment(X, centre, inv_scale, n_jobs=None):
    """``sum_i |(x_i - centre) * inv_scale|^4`` over the rows of X, in float64.

    Ledoit-Wolf's fourth moment of the whole standardised data (scikit-learn's eigen solver
    shrinks the total covariance too). O(m d) time, O(block d) memory.

    Parameters
    ----------
    X : ndarray of shape (m, d)
    centre, inv_scale : ndarray of shape (d,), float64
    n_jobs : int or None

    Returns
    -------
    float
    """
    m, d = X.shape
    rows = min(m, scatter_block_rows(d))
    order = np.arange(m)
    buf = np.empty((rows, d), dtype=np.float64)
    norms = np.empty(rows, dtype=np.float64)
    total = 0.0
    for start in range(0, m, rows):
        n = min(m - start, rows)
        gather_centre(X, order, start, centre, inv_scale, buf[:n], norms[:n], n_jobs)
        total += float(np.dot(norms[:n], norms[:n]))
    return total
