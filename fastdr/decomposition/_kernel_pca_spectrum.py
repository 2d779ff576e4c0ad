"""The spectrum side of :class:`~fastdr.decomposition.KernelPCA`: the centred kernel as an
operator for the iterative eigensolvers, and the clean-up of the computed eigenvalues."""

import numpy as np
import scipy.sparse.linalg

from .._eigen import NONFINITE_REMEDY, check_finite_row_means
from .._eigen_solvers import block_product
from .._eigen_values import ZERO_EIGENVALUE_RATIO


def drop_zero_components(values, vectors, remove_zero_eig):
    """Zero the eigenvalues below 1e-12 times the largest (scikit-learn's round-off rule);
    with ``remove_zero_eig``, drop the components whose eigenvalue is then 0."""
    values = np.array(values, dtype=np.float64)
    if values.size:
        values[values <= ZERO_EIGENVALUE_RATIO * max(values.max(), 0.0)] = 0.0
    if remove_zero_eig:
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

