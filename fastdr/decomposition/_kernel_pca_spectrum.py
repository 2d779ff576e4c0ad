"""The spectrum side of :class:`~fastdr.decomposition.KernelPCA`: the centred kernel as an
operator for the iterative eigensolvers, and the clean-up of the computed eigenvalues."""

import numpy as np
import scipy.sparse.linalg

from .._eigen import NONFINITE_REMEDY, check_finite_row_means
from .._eigen_solvers import block_product

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

class CentredKernel(scipy.sparse.linalg.LinearOperator):
    """The centred kernel ``J K J`` (``J = I - 11^T / m``) applied without forming it.

    A product costs one streaming pass over K (:func:`fastdr._eigen_solvers.block_product`; with
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

