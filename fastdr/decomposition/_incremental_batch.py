"""One batch of incremental PCA (Ross et al., 2008, as scikit-learn's ``IncrementalPCA``).

The model after n_a samples is its top k right singular vectors V (k x d) and values S, the
column means and variances. A batch of b rows updates it with the SVD of the stacked matrix

    M = [ diag(S) V ;  X_batch - mean_batch ;  sqrt(n_a b / n) (mean_a - mean_batch) ]

((k + b + 1) x d; just ``X_batch - mean_batch`` for the first batch), keeping its top k.
scikit-learn runs a full LAPACK SVD of M, computing U (rows x d) that it throws away. Here
only V and S are formed, from the smaller Gram matrix of M (``M^T M``, d x d, when M has at
least d rows; ``M M^T`` otherwise), in float64: one symmetric product and a small
eigenproblem instead of an SVD that forms U too. When both sides of M are large and k is
small, ARPACK runs on M as an operator instead, from a fixed start vector so that the
result is reproducible. A sparse batch is never densified: its Gram matrices come from
sparse products with the centring applied implicitly (``X^T X - b mean mean^T``, ``X X^T -
(X mean) 1^T - ...``), and its operator is ``v -> X v - (mean . v) 1``.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from .._eigen.values import column_signs
from .._kernels.spectral.gram_product import csr_column_moments
from .._validation.budget import check_dense_allocation
from ._centred import column_means, orthonormal_complement
from ._pca_sparse import centring_loss, sparse_scatter, unsigned_index_arrays

# when M's smaller side exceeds _GRAM_MAX_SIDE and is at least _SIDE_PER_COMPONENT times k,
# ARPACK runs on M as an operator: the smaller Gram matrix's eigendecomposition (O(side^3)
# per batch) would dominate, and its memory grows as side^2; with more components ARPACK's
# restarts cost more than the eigendecomposition (bench/DECISIONS.md)
_GRAM_MAX_SIDE = 1024
_SIDE_PER_COMPONENT = 32
# the one-product sparse scatter is kept when centring cancels at most this factor, as in
# :mod:`._centred`; beyond it the scatter is accumulated from centred row blocks
_MAX_CANCELLATION = 1e4
_BLOCK_ROWS = 1024


@dataclass
class Spectrum:
    """A batch's update: the kept right singular vectors (rows), all the singular values
    computed, the squared Frobenius norm of M, M's smaller side (the length of
    scikit-learn's full list of singular values), and ``tail``, the sum of the squared
    singular values beyond the kept ones (from the norm; computed before any scaling back,
    so that it overflows to inf rather than to inf - inf)."""

    components: np.ndarray
    singular_values: np.ndarray
    total: float
    rank_bound: int
    tail: float = None

    def __post_init__(self):
        if self.tail is None:
            kept = self.singular_values[:self.components.shape[0]]
            self.tail = max(self.total - float(np.sum(kept * kept)), 0.0)

    def unscaled(self, factor):
        """The spectrum of M from that of ``factor M``."""
        if factor == 1.0:
            return self
        with np.errstate(over="ignore"):
            return Spectrum(self.components, self.singular_values / factor,
                            self.total / factor / factor, self.rank_bound,
                            self.tail / factor / factor)


def batch_moments(X):
    """Column means and centred column sums of squares of a batch, in float64."""
    if scipy.sparse.issparse(X):
        indptr, indices = unsigned_index_arrays(X)
        return csr_column_moments(indptr, indices, X.data, X.shape[1])
    mean = column_means(X) if X.dtype == np.float64 else X.mean(axis=0, dtype=np.float64)
    return mean, None


def merge_moments(n_a, mean_a, var_a, b, mean_b, ssq_b):
    """Chan, Golub and LeVeque's pairwise update of the column means and (population)
    variances: n_a samples so far, a batch of b with mean ``mean_b`` and centred sums of
    squares ``ssq_b``. Returns the new count, mean and variance."""
    n = n_a + b
    if n_a == 0:
        return n, mean_b.copy(), ssq_b / n
    delta = mean_b - mean_a
    mean = mean_a + delta * (b / n)
    with np.errstate(over="ignore"):  # refused by the estimator when not finite
        ssq = var_a * n_a + ssq_b + delta * delta * (n_a * b / n)
    return n, mean, ssq / n


def update(X, mean_b, ssq_b, prior, correction, k):
    """The top ``k`` of M's spectrum, M built from the batch X (dense or CSR), its column
    means ``mean_b`` and centred column sums of squares ``ssq_b`` (from
    :func:`batch_moments`: None for a dense batch), the previous ``diag(S) V`` (``prior``,
    or None for the first batch) and the mean correction row (None for the first batch).
    Returns ``(Spectrum, ssq_b)``.

    M is scaled by a power of two (exact) when its entries are so large or so small that
    its Gram matrix would overflow or underflow; the singular values are scaled back."""
    b, d = X.shape
    rows = b + (0 if prior is None else prior.shape[0] + 1)
    rank_bound = min(rows, d)
    sparse = scipy.sparse.issparse(X)
    if sparse:
        largest = max(float(np.abs(X.data).max(initial=0.0)), float(np.abs(mean_b).max()))
    else:
        centred = np.subtract(X, mean_b, dtype=np.float64)
        ssq_b = np.einsum("ij,ij->j", centred, centred)
        # the largest column norm bounds the largest entry within sqrt(b): a second pass
        # over the batch is needed only near the limits
        norm = float(np.sqrt(ssq_b.max(initial=0.0)))
        inside = 2.0**-280 * np.sqrt(b) <= norm <= 2.0**280  # 0: constant, or underflow
        largest = 1.0 if inside else float(max(centred.max(), -centred.min()))
    if prior is not None:
        largest = max(largest, float(np.abs(prior).max(initial=0.0)),
                      float(np.abs(correction).max()))
    factor = _power_of_two_scale(largest)
    if factor != 1.0:
        if prior is not None:
            prior, correction = prior * factor, correction * factor
        mean_b = mean_b * factor
        if sparse:
            X = X.multiply(factor).tocsr()
        else:
            centred *= factor
    if sparse:
        batch = _SparseCentred(X, mean_b)
        scaled_ssq = ssq_b if factor == 1.0 else batch_moments(X)[1]
    else:
        batch = _DenseCentred(centred)
        scaled_ssq = ssq_b if factor == 1.0 else np.einsum("ij,ij->j", centred, centred)
    total = float(scaled_ssq.sum())
    if prior is not None:
        total += float(np.sum(prior * prior) + correction @ correction)
    if rank_bound > _GRAM_MAX_SIDE and _SIDE_PER_COMPONENT * k <= rank_bound:
        spectrum = _truncated(batch, prior, correction, k, total, (rows, d))
        return spectrum.unscaled(factor), ssq_b
    side = d if rows >= d else rows
    check_dense_allocation((side, side), np.float64, what="IncrementalPCA's Gram matrix of "
                           "a batch", alternative=f"pass a smaller n_components (at most "
                           f"1/{_SIDE_PER_COMPONENT} of the batch size and of n_features): "
                           "ARPACK then works on the batch as an operator and stores no such "
                           "matrix")
    if rows >= d:
        gram = batch.feature_gram(scaled_ssq)
        if prior is not None:
            gram += prior.T @ prior
            gram += np.outer(correction, correction)
        return _from_feature_gram(gram, k, total, rank_bound).unscaled(factor), ssq_b
    spectrum = _from_row_gram(batch, prior, correction, k, total, (rows, d))
    return spectrum.unscaled(factor), ssq_b


def _power_of_two_scale(largest):
    """1, or the power of two that brings ``largest`` near 1 when M's Gram matrix (sums of
    products of its entries) could overflow or lose digits to underflow."""
    if largest == 0.0 or not np.isfinite(largest) or 2.0**-300 <= largest <= 2.0**300:
        return 1.0
    return float(np.ldexp(1.0, -np.frexp(largest)[1]))


class _DenseCentred:
    """A dense batch, centred (a float64 copy)."""

    def __init__(self, centred):
        self.centred = centred

    def feature_gram(self, ssq):
        return self.centred.T @ self.centred

    def gram(self):
        return self.centred @ self.centred.T

    def times(self, V):  # (X - 1 mean^T) V
        return self.centred @ V

    def transposed_times(self, U):  # (X - 1 mean^T)^T U
        return self.centred.T @ U


class _SparseCentred:
    """A CSR batch X with its column means: ``X - 1 mean^T`` applied, never formed."""

    def __init__(self, X, mean):
        self.X = X
        self.XT = X.T.tocsr()
        self.mean = np.asarray(mean, dtype=np.float64)

    def feature_gram(self, ssq):
        gram = _sparse_scatter(self.X, self.mean)
        gram.flat[::gram.shape[0] + 1] = ssq  # exact, where X^T X - b m m^T cancels
        return gram

    def gram(self):
        if centring_loss(self.X, self.mean) > _MAX_CANCELLATION:
            # a feature whose mean dwarfs its spread: centre column blocks exactly (O(b
            # block) memory) instead of cancelling X X^T against the mean terms
            columns = self.X.tocsc()
            gram = np.zeros((self.X.shape[0],) * 2)
            for start in range(0, self.X.shape[1], _BLOCK_ROWS):
                block = columns[:, start:start + _BLOCK_ROWS].toarray().astype(np.float64)
                block -= self.mean[start:start + _BLOCK_ROWS]
                gram += block @ block.T
            return gram
        X64 = self.X.astype(np.float64) if self.X.dtype != np.float64 else self.X
        row_dot_mean = np.asarray(X64 @ self.mean).ravel()
        gram = (X64 @ X64.T).toarray()
        gram -= row_dot_mean[:, None]
        gram -= row_dot_mean[None, :]
        gram += self.mean @ self.mean
        return gram

    def times(self, V):
        return np.asarray(self.X @ V) - self.mean @ V

    def transposed_times(self, U):
        return np.asarray(self.XT @ U) - np.multiply.outer(self.mean, U.sum(axis=0))


def _sparse_scatter(X, mean):
    """``(X - 1 mean^T)^T (X - 1 mean^T)`` of a CSR batch in float64, dense d x d."""
    if centring_loss(X, mean) <= _MAX_CANCELLATION:
        return sparse_scatter(X, mean)
    # a feature whose mean dwarfs its spread: centre row blocks exactly instead (O(block d)
    # memory, the batch itself stays sparse)
    d = X.shape[1]
    gram = np.zeros((d, d))
    for start in range(0, X.shape[0], _BLOCK_ROWS):
        block = X[start:start + _BLOCK_ROWS].toarray().astype(np.float64, copy=False)
        block -= mean
        gram += block.T @ block
    return gram


def _from_feature_gram(gram, k, total, rank_bound):
    """Spectrum of M from ``M^T M`` (d x d)."""
    values, vectors = np.linalg.eigh(0.5 * (gram + gram.T))
    values = np.maximum(values[::-1][:rank_bound], 0.0)
    vectors = vectors[:, ::-1][:, :k]
    return Spectrum(_signed_rows(vectors), np.sqrt(values), total, rank_bound)


def _from_row_gram(batch, prior, correction, k, total, shape):
    """Spectrum of M from ``M M^T`` (rows x rows, fewer rows than features): the right
    singular vectors are ``M^T u_i / s_i``."""
    rows, d = shape
    gram = batch.gram()
    if prior is not None:
        cross = batch.times(prior.T).T  # prior (X - 1 mean^T)^T, k x b
        with_correction = batch.times(correction)
        gram = np.block([
            [prior @ prior.T, cross, (prior @ correction)[:, None]],
            [cross.T, gram, with_correction[:, None]],
            [(prior @ correction)[None, :], with_correction[None, :],
             np.array([[correction @ correction]])],
        ])
    values, vectors = np.linalg.eigh(0.5 * (gram + gram.T))
    values = np.maximum(values[::-1], 0.0)
    singular = np.sqrt(values)
    left = vectors[:, ::-1][:, :k]
    right = _transposed_times(batch, prior, correction, left)  # columns: s_i v_i
    # an eigenvalue of M M^T within its round-off (eps rows s_1^2) of 0 gives no direction:
    # M's rank is below k there, and any orthonormal completion is a valid SVD
    live = values[:k] > np.finfo(np.float64).eps * max(rows, d) * (values[0] if rows else 0.0)
    right[:, live] /= singular[:k][live]
    if not live.all():
        basis, _ = np.linalg.qr(right[:, live])
        right = np.hstack([basis, orthonormal_complement(basis, int((~live).sum()), d)])
    return Spectrum(_signed_rows(right), singular, total, min(rows, d))


def _transposed_times(batch, prior, correction, U):
    """``M^T U`` for U with M's row count of rows."""
    if prior is None:
        return batch.transposed_times(U)
    k = prior.shape[0]
    return (prior.T @ U[:k] + batch.transposed_times(U[k:-1])
            + np.multiply.outer(correction, U[-1]))


def _truncated(batch, prior, correction, k, total, shape):
    """Top k of M by ARPACK on M as an operator."""
    rows, d = shape

    def matmat(V):
        V = np.asarray(V, dtype=np.float64).reshape(d, -1)
        centred = batch.times(V)
        if prior is None:
            return centred
        return np.vstack([prior @ V, centred, correction @ V])

    def rmatmat(U):
        U = np.asarray(U, dtype=np.float64).reshape(rows, -1)
        return _transposed_times(batch, prior, correction, U)

    operator = scipy.sparse.linalg.LinearOperator(
        (rows, d), dtype=np.float64, matvec=lambda v: matmat(v).ravel(),
        rmatvec=lambda u: rmatmat(u).ravel(), matmat=matmat, rmatmat=rmatmat)
    start = np.random.RandomState(0).uniform(-1.0, 1.0, min(rows, d))
    _, singular, vt = scipy.sparse.linalg.svds(operator, k=k, tol=0, v0=start,
                                                 return_singular_vectors="vh")
    order = np.argsort(singular)[::-1]
    return Spectrum(_signed_rows(vt[order].T), singular[order], total, min(rows, d))


def _signed_rows(vectors):
    """Columns as C-ordered rows, each flipped so its largest-magnitude entry is positive
    (scikit-learn's ``svd_flip(u_based_decision=False)``)."""
    return np.ascontiguousarray((vectors * column_signs(vectors)).T)
