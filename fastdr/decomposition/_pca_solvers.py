"""PCA's solvers: scikit-learn's ``"auto"`` rule, the exact routes, ARPACK and randomized SVD.

Every route returns a :class:`Route`: the mean, the descending eigenvalues of the centred
scatter ``Xc^T Xc`` it computed (all of them, or the top k), their unit eigenvectors, the
scatter's trace and the length of the spectrum scikit-learn's same solver would see (the
noise variance averages over it).
"""

from collections import namedtuple

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from .. import _config as config
from .._config import scatter_block_rows
from .._eigen import check_spectrum, spectral_pairs
from .._validation.budget import check_dense_allocation
from .._validation.params import check_random_state
from ..exceptions import MemoryBudgetError
from ._centred import (
    _MAX_CANCELLATION,
    centred_gram,
    centred_scatter,
    column_means,
    orthonormal_complement,
)
from ._pca_arpack import (
    explicit_gram_applies,
    explicit_gram_matrix,
    gram_arpack_top,
    gram_route_applies,
)
from ._pca_sparse import centred_operator, is_sparse, sparse_mean_and_total, sparse_scatter

SCATTER = "The scatter matrix of the centred data"
REMEDY = ("The squares of X's values overflow float64: scale X first (for example with "
          "sklearn.preprocessing.StandardScaler).")
#: Solvers computing the whole spectrum (or exact top pairs of it), checked as scikit-learn's
#: ``"full"``; and the truncated ones, checked as its ``"arpack"`` / ``"randomized"``.
EXACT = ("full", "covariance_eigh", "gram")
TRUNCATED = ("arpack", "randomized")

Route = namedtuple("Route", "mean values vectors total n_spectrum scores")


def resolve_auto(n_components, shape, sparse):
    """The solver scikit-learn 1.9's ``svd_solver="auto"`` picks, by its own rule.

    Sparse X: ``"arpack"``. Dense: ``"covariance_eigh"`` for at most 1,000 features and at
    least 10 times as many samples; else ``"full"`` for a problem at most 500 x 500 or
    ``n_components="mle"``; else ``"randomized"`` for an int ``n_components`` below 80% of
    ``min(X.shape)``; else ``"full"`` (a float, None, or many components).
    """
    if sparse:
        return "arpack"
    m, d = shape
    if d <= 1_000 and m >= 10 * d:
        return "covariance_eigh"
    k = min(shape) if n_components is None else n_components
    if max(shape) <= 500 or isinstance(k, str):
        return "full"
    if 1 <= k < 0.8 * min(shape):
        return "randomized"
    return "full"


def check_count(n_components, solver, shape):
    """scikit-learn's checks of ``n_components`` against the data, for the solver run."""
    m, d = shape
    limit = min(m, d)
    if solver in EXACT:
        if n_components == "mle":
            if m < d:
                raise ValueError(
                    "n_components='mle' is only supported if n_samples >= n_features; got "
                    f"{m} samples and {d} features. Pass an int n_components, or more samples."
                )
        elif not 0 <= n_components <= limit:
            raise ValueError(
                f"n_components={n_components} must be between 0 and min(n_samples, "
                f"n_features)={limit} with svd_solver={solver!r}. Pass n_components <= "
                f"{limit}."
            )
        return
    if isinstance(n_components, str):
        raise ValueError(
            f"n_components={n_components!r} cannot be a string with svd_solver='{solver}'. "
            "Pass svd_solver='full' for n_components='mle'."
        )
    if not 1 <= n_components <= limit:
        raise ValueError(
            f"n_components={n_components!r} must be between 1 and min(n_samples, "
            f"n_features)={limit!r} with svd_solver='{solver}'. Pass an int in that range, or "
            "svd_solver='full' for a share of the variance."
        )
    if solver == "arpack" and n_components == limit:
        raise ValueError(
            f"n_components={n_components!r} must be strictly less than min(n_samples, "
            f"n_features)={limit!r} with svd_solver='{solver}'. Pass svd_solver='full' for "
            "every component."
        )


# ----------------------------------------------------------------------------- exact routes


def fit_covariance(X, k, mean=None):
    """Eigenpairs of the d x d centred scatter (dense: never a copy of X; sparse: implicit).

    ``mean``, here and in the other routes: :func:`column_means` of a dense float64 X when
    the caller has it already (the estimator's finiteness check computes it), else None.
    """
    if is_sparse(X):
        mean, _ = sparse_mean_and_total(X)
        # CSR with short rows: the pairs kernel (as ARPACK's explicit route), else scipy's
        scatter = (explicit_gram_matrix(X, mean) if explicit_gram_applies(X)
                   else sparse_scatter(X, mean))
    else:
        mean, scatter = centred_scatter(X, mean)
    total = float(np.trace(scatter))
    d = scatter.shape[0]
    if k == 0:
        return Route(mean, np.zeros(0), np.zeros((d, 0)), total, d, None)
    values, vectors = spectral_pairs(
        scatter, k, solver="auto", what=SCATTER, psd=True, remedy=REMEDY,
        max_components=None, overwrite_a=True)
    return Route(mean, values, vectors, total, d, None)


def fit_gram(X, k, mean=None):
    """Eigenpairs of the m x m Gram matrix of the centred rows, mapped to feature space."""
    m, d = X.shape
    check_dense_allocation((m, m), np.float64, what=f"The {m} x {m} Gram matrix of PCA",
                           alternative="Use svd_solver='randomized' or 'full'.")
    mean = column_means(X) if mean is None else mean
    gram = centred_gram(X, mean)
    total = float(np.trace(gram))
    if k == 0:
        return Route(mean, np.zeros(0), np.zeros((d, 0)), total, m, None)
    values, left = spectral_pairs(
        gram, k, solver="auto", what="The Gram matrix of the centred data", psd=True,
        remedy=REMEDY, max_components=None, overwrite_a=True)
    del gram
    # Right singular vectors v = Xc^T u / s (u is orthogonal to 1, so Xc^T u = X^T u).
    vectors = np.asarray(X.T @ left.astype(X.dtype), dtype=np.float64)
    vectors -= np.outer(mean, left.sum(axis=0))
    null = values <= 10 * max(m, d) * np.finfo(np.float64).eps * max(values.max(), 0.0)
    good = ~null
    vectors[:, good] /= np.sqrt(values[good])
    if null.any():
        vectors[:, null] = orthonormal_complement(vectors[:, good], int(null.sum()), d)
        values[null] = 0.0
    return Route(mean, values, vectors, total, m, None)


def fit_full(X, in_place, mean=None):
    """LAPACK SVD of the centred data (of X itself, centred in place, when ``in_place``)."""
    mean = column_means(X) if mean is None else mean
    if in_place:
        X -= mean.astype(X.dtype)
        centred = X
    else:
        centred = np.subtract(X, mean, dtype=np.float64)
    U, singular, vt = scipy.linalg.svd(centred, full_matrices=False, overwrite_a=not in_place,
                                       check_finite=False)
    singular = singular.astype(np.float64)
    with np.errstate(over="ignore"):
        values = singular**2  # inf when X's squares overflow: refused just below
    check_spectrum(values, None, values.shape[0], what="The centred data",
                   dtype=np.float64, remedy=REMEDY)
    return Route(mean, values, vt.T.astype(np.float64), float(np.sum(values)),
                 values.shape[0], U * singular.astype(U.dtype))


# ------------------------------------------------------------------------- truncated routes


def centring(X, *, prefer_copy=False, implicit_float32=False, mean=None):
    """How to centre X for a truncated solver: ``(base, shift, mean, total)``.

    The centred data are ``base - 1 shift^T``: either X itself with ``shift = mean``
    (implicit centring, no copy) or a centred copy with ``shift = 0``. ``mean`` is float64;
    ``total`` the centred sum of squares. Sparse X is always centred implicitly. Dense X is
    too when the centring cancels at most ``_MAX_CANCELLATION`` (about 4 digits) and X is
    float64 (or ``implicit_float32``: a reader that accumulates in float64); otherwise, as
    scikit-learn does, a centred copy is made. ``prefer_copy``: dense X gets the copy when
    it fits the memory budget (ARPACK's many products through scipy run faster on a plain
    array than through the operator; bench: pca_arpack).
    """
    if is_sparse(X):
        mean, total = sparse_mean_and_total(X)
        return X, mean, mean, total
    m, d = X.shape
    mean = column_means(X) if mean is None else mean
    if prefer_copy:
        try:
            check_dense_allocation(X.shape, X.dtype, what="the centred copy of X for ARPACK",
                                   alternative="the implicit centring it falls back to")
        except MemoryBudgetError:
            pass
        else:  # one pass: the copy, then its column sums of squares
            A = X - mean.astype(X.dtype)
            total = float(np.einsum("ij,ij->j", A, A, dtype=np.float64).sum())
            return A, np.zeros(d), mean, total
    rows = scatter_block_rows(d)
    ssq = np.zeros(d)
    for start in range(0, m, rows):
        block = X[start:start + rows] - mean
        ssq += np.einsum("ij,ij->j", block, block)
    total = float(ssq.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = np.where(mean == 0, 0.0, m * mean * mean / ssq)
    if (X.dtype == np.float64 or implicit_float32) and loss.max(initial=0.0) <= \
            _MAX_CANCELLATION:
        return X, mean, mean, total
    return X - mean.astype(X.dtype), np.zeros(d), mean, total


def scatter_and_centring(X, *, implicit_float32=False, mean=None):
    """A dense X's centred scatter and how to centre its products, from one pass over X.

    :func:`fastdr.decomposition._centred.centred_scatter` gives the mean and the d x d
    scatter (float64 accumulation where the one-product route would cancel); its diagonal
    gives the cancellation check of :func:`centring`, with no pass of its own. Returns
    ``(base, shift, mean, total, scatter)`` as :func:`centring` plus the scatter: X itself
    with ``shift = mean`` where implicit centring keeps its digits (float64, or
    ``implicit_float32``), else a centred copy with ``shift = 0``.
    """
    mean, scatter = centred_scatter(X, mean)
    total = float(np.trace(scatter))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        loss = np.where(mean == 0, 0.0, X.shape[0] * mean * mean / np.diag(scatter))
    if (X.dtype == np.float64 or implicit_float32) and loss.max(initial=0.0) <= \
            _MAX_CANCELLATION:
        return X, mean, mean, total, scatter
    return X - mean.astype(X.dtype), np.zeros_like(mean), mean, total, scatter


def centred_data(X, *, prefer_copy=False, mean=None):
    """``X - 1 mean^T`` (a LinearOperator when centred implicitly, see :func:`centring`),
    the mean (float64) and the centred sum of squares."""
    base, shift, mean, total = centring(X, prefer_copy=prefer_copy, mean=mean)
    if shift is mean:
        return centred_operator(base, mean), mean, total
    return base, mean, total


def _normalizer(name):
    if name == "QR":
        return lambda A: scipy.linalg.qr(A, mode="economic", check_finite=False)[0]
    if name == "LU":
        return lambda A: scipy.linalg.lu(A, permute_l=True, check_finite=False)[0]
    return lambda A: A


def resolved_iterations(n_iter, k, shape):
    """scikit-learn's ``iterated_power="auto"``: 7 power iterations when ``k`` is below 10%
    of ``min(shape)``, else 4; an int stays as given."""
    if n_iter == "auto":
        return 7 if k < 0.1 * min(shape) else 4
    return n_iter


def randomized_gram_applies(X, k, params):
    """True when ``"randomized"``'s power iterations cost less on the d x d centred scatter,
    formed once, than as products with X: a dense tall X with at most
    ``RANDOMIZED_EXPLICIT_GRAM_MAX_DIM`` features and ``d <= RANDOMIZED_GRAM_GAIN x
    iterations x block width`` (the matrix is O(m d^2) once, near the BLAS peak; each
    iteration is two O(m d width) products, which stream X from memory)."""
    if is_sparse(X):
        return False
    m, d = X.shape
    if m < d or d > config.RANDOMIZED_EXPLICIT_GRAM_MAX_DIM:
        return False
    n_iter = resolved_iterations(params.iterated_power, k, X.shape)
    return d <= config.RANDOMIZED_GRAM_GAIN * n_iter * (k + params.n_oversamples)


def randomized_top(A, k, *, n_oversamples, n_iter, normalizer, random_state, dtype,
                   gram=None):
    """Top k singular values, right and left singular vectors of ``A`` (m x d), randomized.

    Halko, Martinsson and Tropp (2011), algorithm 4.3/4.4: a Gaussian block of
    ``k + n_oversamples`` columns, ``n_iter`` power iterations (each ``A A^T`` product
    renormalised by ``normalizer``: ``"none"``, ``"QR"``, ``"LU"``, or ``"auto"``: none up to
    2 iterations, LU beyond), an orthonormal basis Q of the sampled range, and the exact SVD
    of the small ``Q^T A``. Works on ``A^T`` when m < d (the smaller block), as scikit-learn;
    the draws from ``random_state`` are scikit-learn's too, so a seed gives its answer.

    ``gram``, the d x d float64 matrix ``A^T A`` of a tall A, takes the power iterations:
    ``Q <- normalizer(gram Q)`` spans what scikit-learn's two renormalised products span
    (LU and QR keep a block's span), so the answer is the same up to rounding.
    """
    m, d = A.shape
    n_iter = resolved_iterations(n_iter, k, (m, d))
    if normalizer == "auto":
        normalizer = "none" if n_iter <= 2 else "LU"
    norm = _normalizer(normalizer)
    transpose = m < d
    op = A.T if transpose else A
    rng = check_random_state(random_state)
    Q = rng.normal(size=(op.shape[1], k + n_oversamples))
    if dtype == np.float32:
        Q = Q.astype(np.float32)
    if gram is not None and not transpose:
        Q = Q.astype(np.float64)
        for _ in range(n_iter):
            Q = norm(gram @ Q)
        Q = Q.astype(dtype, copy=False)
    else:
        for _ in range(n_iter):
            Q = norm(op @ Q)
            Q = norm(op.T @ Q)
    Q = scipy.linalg.qr(op @ Q, mode="economic", check_finite=False)[0]
    B = np.asarray(op.T @ Q).T  # Q^T op, (k + p) x n
    U_hat, singular, vt = scipy.linalg.svd(B, full_matrices=False, check_finite=False)
    if transpose:
        return singular[:k], (Q @ U_hat[:, :k]), vt[:k].T
    return singular[:k], vt[:k].T, Q @ U_hat[:, :k]


def arpack_top(A, k, *, tol, random_state):
    """Top k singular values, right and left singular vectors of ``A`` by ARPACK (``svds``).

    The starting vector is scikit-learn's: uniform on [-1, 1], ``min(A.shape)`` long, drawn
    from ``random_state``.
    """
    rng = check_random_state(random_state)
    v0 = rng.uniform(-1, 1, min(A.shape))
    u, singular, vt = scipy.sparse.linalg.svds(A, k=k, tol=tol, v0=v0)
    return singular[::-1], vt[::-1].T, u[:, ::-1]


def fit_truncated(X, k, solver, params, mean=None):
    """The ``"arpack"`` or ``"randomized"`` route; ``params`` holds the estimator's knobs."""
    gram = None
    if solver == "arpack" and not is_sparse(X) and explicit_gram_applies(X):
        # a tall dense X with few features: ARPACK on the d x d scatter
        base, shift, mean, total, gram = scatter_and_centring(X, implicit_float32=True,
                                                              mean=mean)
        A = None
    elif solver == "arpack" and (explicit_gram_applies(X) or gram_route_applies(X)):
        # a tall X: ARPACK on the Gram operator, the d x d matrix formed once (CSR) or the
        # one-pass product (no copy of X unless centring cancels)
        base, shift, mean, total = centring(X, implicit_float32=True, mean=mean)
        A = None
    elif solver == "randomized" and randomized_gram_applies(X, k, params):
        # the power iterations on the d x d scatter; the final two products on X itself
        base, shift, mean, total, gram = scatter_and_centring(X, mean=mean)
        A = centred_operator(base, mean) if shift is mean else base
    else:
        A, mean, total = centred_data(X, prefer_copy=solver == "arpack", mean=mean)
    if not np.isfinite(total):
        raise ValueError(f"{SCATTER} has non-finite entries (inf or NaN). {REMEDY}")
    if solver == "arpack" and total <= 0:  # ARPACK's start vector would be projected to 0
        raise ValueError(
            "X has no variance: every sample is the same point, so svd_solver='arpack' has "
            "no direction to iterate on. Use svd_solver='covariance_eigh', which returns zero "
            "variances for such data, or check the data.")
    if A is None:
        v0 = check_random_state(params.random_state).uniform(-1, 1, X.shape[1])
        singular, vectors, left = gram_arpack_top(base, shift, k, tol=params.tol, v0=v0,
                                                  gram=gram)
    elif solver == "arpack":
        singular, vectors, left = arpack_top(A, k, tol=params.tol,
                                             random_state=params.random_state)
    else:
        singular, vectors, left = randomized_top(
            A, k, n_oversamples=params.n_oversamples, n_iter=params.iterated_power,
            normalizer=params.power_iteration_normalizer, random_state=params.random_state,
            dtype=X.dtype, gram=gram)
    singular = np.asarray(singular, dtype=np.float64)
    values = singular**2
    check_spectrum(values, vectors, k, what="The centred data", dtype=np.float64,
                   remedy=REMEDY)
    # fit_transform returns U S, as scikit-learn (not X V: the two differ where a truncated
    # solve has not converged)
    return Route(mean, values, np.asarray(vectors, dtype=np.float64), total, min(X.shape),
                 left * singular.astype(left.dtype))
