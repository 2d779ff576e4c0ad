"""The spectrum side of :class:`~fastdr.decomposition.KernelPCA`: the centred kernel as an
operator for the iterative eigensolvers, and the clean-up of the computed eigenvalues."""

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from .._config import NYSTROM_LANDMARKS
from .._eigen import NONFINITE_REMEDY, check_finite_row_means
from .._eigen.solvers import block_product
from .._runtime.blas import single_threaded_blas

#: scikit-learn's thresholds for the eigenvalues of a PSD matrix, by precision
#: (significant negative ratio, significant negative value, round-off positive ratio).
_PSD_THRESHOLDS = {True: (1e-5, 1e-10, 1e-12), False: (5e-3, 1e-6, 2e-7)}
_NOT_PSD = ("Either the matrix is not PSD, or there was an issue while computing the "
            "eigendecomposition of the matrix. Use a positive semidefinite kernel (sigmoid "
            "and precomputed kernels need not be), or ask for fewer components (an int "
            "n_components) so that only positive eigenvalues are computed.")


def clean_spectrum(values, vectors, *, double, drop_zero):
    """Check, clip and trim the eigenvalues of the centred kernel as scikit-learn does.

    A ValueError when every eigenvalue is negative, or when the most negative one is below
    both ``-ratio * max`` and ``-value`` (a kernel that is not PSD); otherwise negatives are
    clipped to 0 and values below ``small * max`` (round-off) set to 0, silently.
    ``drop_zero`` (``remove_zero_eig``, or ``n_components=None``) then drops the components
    whose eigenvalue is 0.
    """
    values = np.array(values, dtype=np.float64)
    ratio, value, small = _PSD_THRESHOLDS[bool(double)]
    if values.size:
        top = values.max()
        if top < 0:
            raise ValueError(f"All eigenvalues are negative (maximum is {top:g}). {_NOT_PSD}")
        low = values.min()
        if low < -ratio * top and low < -value:
            raise ValueError(
                f"There are significant negative eigenvalues ({-low / top:g} of the maximum "
                f"positive). {_NOT_PSD}"
            )
        values[values < small * top] = 0.0
    if drop_zero:
        keep = values > 0
        values, vectors = values[keep], np.ascontiguousarray(vectors[:, keep])
    return values, vectors

def nystrom_start(columns, m, width, rng):
    """A guess of the top eigenvectors of the centred kernel matrix, from a few of its columns.

    Nystrom: with ``C = K[:, S]`` for s random landmark rows S and ``W = K[S, S]``,
    ``K ~ C W^+ C^T``, so the centred kernel ``J K J ~ F F^T`` with ``F = J C W^(-1/2)``
    (over the positive part of W's spectrum). F's top ``width`` left singular vectors start
    the block eigensolver near the answer: on the rbf kernel of the benchmark's 10,000 x 10
    data it then reads K 8 times instead of 10. Any start is safe (the solver's stopping
    test is unchanged); a poor one only saves fewer passes.

    Parameters
    ----------
    columns : callable
        ``columns(S)`` returns ``K[:, S]`` (an (m, len(S)) array) for sorted indices S.
    m : int
        Order of K.
    width : int
        Columns wanted (the solver's block width).
    rng : numpy.random.RandomState or Generator
        Draws the landmarks.

    Returns
    -------
    ndarray of shape (m, width), float64, or None
        None when m is under 8 times the landmark count (a small problem; the random start
        costs little there) or the landmarks' kernel has no usable positive part.
        Time O(m s (d + s)), memory O(m s); no m x m array.
    """
    s = max(NYSTROM_LANDMARKS, 4 * width)
    if 8 * s > m:
        return None
    landmarks = np.sort(rng.choice(m, s, replace=False))
    C = np.asarray(columns(landmarks), dtype=np.float64)
    if not np.isfinite(C).all():
        return None  # the full kernel's row means report it, with the remedy
    # small products on one thread: none leaves OpenBLAS workers spinning into the solver's
    # first pass over K (a numba kernel)
    with single_threaded_blas():
        W = C[landmarks]
        lam, V = scipy.linalg.eigh(0.5 * (W + W.T), check_finite=False)
        keep = lam > 1e-8 * lam[-1]
        if lam[-1] <= 0 or keep.sum() < width:
            return None
        F = C @ (V[:, keep] / np.sqrt(lam[keep]))
        F -= F.mean(axis=0)
        mu, Z = scipy.linalg.eigh(F.T @ F, check_finite=False)
        return F @ Z[:, ::-1][:, :width]


class CentredKernel(scipy.sparse.linalg.LinearOperator):
    """The centred kernel ``J K J`` (``J = I - 11^T / m``) applied without forming it.

    A product costs one streaming pass over K (:func:`fastdr._eigen.solvers.block_product`; with
    ``upper``, over its upper triangle only, the rest unread) plus O(m b) for the two
    centrings; the first product carries an extra column of ones, which
    yields K's row means (needed by ``transform``) without another pass.
    """

    def __init__(self, K, n_jobs, upper=False, remedy=NONFINITE_REMEDY):
        super().__init__(dtype=K.dtype, shape=K.shape)
        self.K = K
        self.n_jobs = n_jobs
        self.upper = upper
        self.remedy = remedy
        self.row_means = None

    def _matmat(self, Q):
        Q = np.asarray(Q, dtype=self.dtype)
        m, b = Q.shape
        centred = Q - Q.mean(axis=0)
        if self.row_means is None:
            centred = np.column_stack([centred, np.ones(m, dtype=self.dtype)])
        product = block_product(self.K, centred, self.n_jobs, upper=self.upper)
        if self.row_means is None:
            self.row_means = product[:, b].astype(np.float64) / m
            # a non-finite K shows in its row sums: stop before the solver iterates on NaN
            check_finite_row_means(self.row_means, "The kernel matrix", self.remedy)
            product = product[:, :b]
        return product - product.mean(axis=0)

    def _matvec(self, x):
        return self._matmat(np.asarray(x).reshape(-1, 1)).ravel()

