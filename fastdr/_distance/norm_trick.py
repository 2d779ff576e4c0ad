"""The set-up of the norm trick, shared by every brute-force distance route.

``pairwise_distances``, the k-NN search and the KernelPCA rbf kernel all compute
``|q - t|^2 = |q - c|^2 + |t - c|^2 - 2 (q - c).(t - c)`` with the cross term from one GEMM
per block, on rows centred on a common point ``c`` (the targets' mean: distances do not
change, and cancellation shrinks). :func:`norm_trick_setup` computes that centre, the squared
norms and the tolerance below which a value may have cancelled and must be recomputed
exactly (:data:`fastdr._config.RECOMPUTE_TOL`); the packing and the GEMM stay with each
kernel (see :mod:`fastdr._kernels.distances.euclidean`).
"""

from typing import NamedTuple

import numpy as np

from .._config import PREP_SERIAL_MAX_ELEMENTS, RECOMPUTE_TOL, TARGET_BLOCK
from .._kernels.distances import euclidean as dist_kernels
from .._kernels.knn import screen as knn_screen


class NormTrick(NamedTuple):
    """What :func:`norm_trick_setup` returns."""

    #: (d,) the common centre ``c``, in the targets' dtype
    centre: np.ndarray
    #: (n,) float64 ``|t - c|^2``
    t_norms: np.ndarray
    #: (m,) float64 ``|q - c|^2`` (the same array as ``t_norms`` for a self query), or None
    q_norms: np.ndarray | None
    #: recompute values below ``tol * (|q - c|^2 + |t - c|^2)`` exactly
    tol: float


_SERIAL_TWINS = {
    dist_kernels.centred_sqnorms: dist_kernels.centred_sqnorms_serial,
    dist_kernels.centre_rows: dist_kernels.centre_rows_serial,
    dist_kernels.pack_queries: dist_kernels.pack_queries_serial,
    dist_kernels.pack_targets: dist_kernels.pack_targets_serial,
    knn_screen.pack_screen_queries: knn_screen.pack_screen_queries_serial,
    knn_screen.pack_screen_targets: knn_screen.pack_screen_targets_serial,
}


def prep_kernel(kernel, rows):
    """``kernel``, or its serial twin when ``rows`` is small (``PREP_SERIAL_MAX_ELEMENTS``).

    The twins give the same values without a parallel launch, which costs more than the
    whole O(m d) pass on small inputs.
    """
    if rows.size <= PREP_SERIAL_MAX_ELEMENTS:
        return _SERIAL_TWINS[kernel]
    return kernel


def norm_trick_setup(T, Q=None, *, query_norms=True):
    """Centre, squared norms and recompute tolerance for the norm trick on T (and Q).

    Call it inside :func:`fastdr._runtime.threads.parallel_section`: the norms come from a parallel
    kernel.

    Parameters
    ----------
    T : ndarray of shape (n, d), float32 or float64
        The targets; the centre is their mean (accumulated in float64, rounded to T's dtype).
    Q : ndarray of shape (m, d) or None
        The queries, in T's dtype; None (or T itself) for a self query, whose query norms are
        the target norms.
    query_norms : bool, default=True
        Whether to compute ``|q - c|^2`` (the k-NN kernels do not need it).

    Returns
    -------
    NormTrick
        ``(centre, t_norms, q_norms, tol)``. O((m + n) d) time, O(m + n) memory.
    """
    centre = _centre(T)
    t_norms = prep_kernel(dist_kernels.centred_sqnorms, T)(T, centre)
    if Q is None or Q is T:
        q_norms = t_norms
    elif query_norms:
        q_norms = prep_kernel(dist_kernels.centred_sqnorms, Q)(Q, centre)
    else:
        q_norms = None
    return NormTrick(centre, t_norms, q_norms, RECOMPUTE_TOL[np.dtype(T.dtype)])


def self_norm_trick(X):
    """:func:`norm_trick_setup` for X against itself, with the centred rows from the same pass.

    Call it inside :func:`fastdr._runtime.threads.parallel_section`.

    Returns
    -------
    trick : NormTrick
        As ``norm_trick_setup(X)``: the same centre, norms and tolerance.
    centred : ndarray of shape (m, d)
        ``X - centre`` in X's dtype. O(m d) time and memory.
    """
    centre = _centre(X)
    centred, norms = prep_kernel(dist_kernels.centre_rows, X)(X, centre)
    return NormTrick(centre, norms, norms, RECOMPUTE_TOL[np.dtype(X.dtype)]), centred


def _centre(T):
    """The common centre: T's mean, accumulated in float64, rounded to T's dtype."""
    return T.mean(axis=0, dtype=np.float64).astype(T.dtype)


def target_block(n):
    """Targets per GEMM block: ``TARGET_BLOCK``, or n rounded up to 16 when there are fewer."""
    return int(min(TARGET_BLOCK, -(-n // 16) * 16))
