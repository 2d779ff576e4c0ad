"""The matrix M of modified LLE, Hessian eigenmaps and LTSA, sparse, from per-point blocks.

scikit-learn builds these as a dense (or LIL) m x m matrix in a Python loop over the points.
Here every point's small dense block is computed by a parallel numba kernel
(:mod:`fastdr._kernels.lle.methods`) and the blocks are summed into a CSR matrix by the
race-free two-pass assembly of :mod:`fastdr._kernels.lle.assembly`. Memory O(m k^2).
"""

import numpy as np
import scipy.sparse

from .._config import LLE_POINT_BLOCK as _POINT_BLOCK
from .._kernels.lle import assembly as lle_assembly
from .._kernels.lle import methods as kernels
from .._runtime.threads import parallel_section
from .._validation.budget import check_dense_allocation

METHODS = ("standard", "hessian", "modified", "ltsa")


def hessian_min_neighbors(n_components):
    """Smallest ``n_neighbors`` Hessian eigenmaps accepts: ``p (p + 3) / 2 + 1``."""
    return n_components * (n_components + 3) // 2 + 1


def method_matrix(method, X, indices, n_components, *, hessian_tol, modified_tol, n_jobs):
    """The sparse M of ``method`` ("modified", "hessian" or "ltsa").

    Parameters
    ----------
    method : str
    X : ndarray of shape (m, d), float32 or float64
    indices : ndarray of shape (m, k), int64
        Neighbours of each point (never the point itself).
    n_components : int
    hessian_tol, modified_tol : float
    n_jobs : int or None

    Returns
    -------
    scipy.sparse.csr_matrix of shape (m, m)
        Symmetric (bitwise), columns sorted in each row.
    """
    m, k = indices.shape
    size = k + 1 if method == "modified" else k
    check_dense_allocation(
        (m, size, size), np.float64, what=f"The local blocks of {method} LLE",
        alternative="Use fewer n_neighbors, or method='standard' (O(m k) memory).")
    blocks = np.empty((m, size, size), dtype=np.float64)
    with parallel_section(n_jobs):
        if method == "ltsa":
            kernels.ltsa_blocks(X, indices, n_components, _POINT_BLOCK, blocks)
        elif method == "hessian":
            kernels.hessian_blocks(X, indices, n_components, float(hessian_tol),
                                   _POINT_BLOCK, blocks)
        else:
            ratios = np.empty(m, dtype=np.float64)
            kernels.modified_ratios(X, indices, n_components, _POINT_BLOCK, ratios)
            eta = float(np.median(ratios))
            kernels.modified_blocks(X, indices, n_components, eta, float(modified_tol),
                                    _POINT_BLOCK, blocks)
    if method == "modified":
        sets = self_and_neighbours(indices)
    else:
        sets = np.ascontiguousarray(indices, dtype=np.int64)
    return block_matrix(blocks, sets, m, n_jobs)


def self_and_neighbours(indices):
    """The index sets ``S_i = (i, indices[i, 0], ..., indices[i, k-1])``, shape (m, k + 1)."""
    m, k = indices.shape
    sets = np.empty((m, k + 1), dtype=np.int64)
    sets[:, 0] = np.arange(m)
    sets[:, 1:] = indices
    return sets


def block_matrix(blocks, sets, m, n_jobs):
    """``M = sum_i P_i^T B_i P_i`` as CSR, ``P_i`` picking the indices ``sets[i]``.

    The one assembly of M for the four LLE methods.

    Parameters
    ----------
    blocks : ndarray of shape (n, s, s) or (n, s), float64
        Exactly symmetric blocks ``B_i = blocks[i]``, or the vectors ``u_i = blocks[i]`` of
        rank-one blocks ``B_i = u_i u_i^T`` (standard LLE, where ``u_i`` is row i of
        ``I - W``).
    sets : ndarray of shape (n, s), int64
        Distinct indices in [0, m) in each row.
    m : int
    n_jobs : int or None

    Returns
    -------
    scipy.sparse.csr_matrix of shape (m, m)
    """
    ptr, point, slot = lle_assembly.set_reverse_lists(sets, m)
    with parallel_section(n_jobs) as threads:
        n_blocks = max(1, min(m, 4 * threads))
        counts = lle_assembly.set_row_counts(sets, ptr, point, n_blocks)
        indptr = np.empty(m + 1, dtype=np.int64)
        indptr[0] = 0
        np.cumsum(counts, out=indptr[1:])
        nnz = int(indptr[-1])
        index_dtype = np.int32 if max(nnz, m) < np.iinfo(np.int32).max else np.int64
        out_indices = np.empty(nnz, dtype=index_dtype)
        out_data = np.empty(nnz, dtype=np.float64)
        lle_assembly.block_fill(blocks, sets, ptr, point, slot, n_blocks, indptr,
                                out_indices, out_data)
    M = scipy.sparse.csr_matrix((out_data, out_indices, indptr.astype(index_dtype)),
                                shape=(m, m), copy=False)
    M.has_sorted_indices = True
    return M
