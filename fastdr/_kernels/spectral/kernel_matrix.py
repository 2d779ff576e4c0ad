"""Kernel matrices for kernel PCA, written straight into one preallocated output array.

Kernel codes: 0 linear ``<x, y>``, 1 poly ``(gamma <x, y> + coef0)^degree``, 2 sigmoid
``tanh(gamma <x, y> + coef0)``, 3 cosine ``<x, y> / (|x| |y|)`` (0 for a zero row).
The dot-product kernels take the Gram matrix from BLAS in the output array and transform it
in place (:func:`dot_kernel_inplace`). The rbf kernel ``exp(-gamma |x - y|^2)`` is fused with
the distance computation, row by row, so no m x m distance matrix or other temporary
exists: for few features (:func:`rbf_direct`) exact float64 sums along a row feed the
vectorised exponential of :mod:`fastdr._kernels.vexp`; for many, BLAS writes the centred
Gram matrix into the output and one in-place pass applies the norm trick of
:mod:`fastdr._kernels.distances.euclidean` (recomputing distances that may have cancelled) and the
exponential (:func:`rbf_from_gram_inplace`). For a symmetric kernel only the upper triangle
is computed, then mirrored. The one large Gram product is a single BLAS call made by the
caller before these kernels run, so it may use BLAS's own threads; the kernels here call no
BLAS. (The k-NN, pairwise-distance, NCA and MMC kernels do call BLAS from inside a
``prange``, with OpenBLAS held to one thread: see :mod:`fastdr._runtime.blas`.)
"""

import numpy as np
from numba import njit, prange

from ..._config import FASTMATH
from ..distances.euclidean import sqdist_exact
from ..vexp import exp_shifted

LINEAR, POLY, SIGMOID, COSINE = 0, 1, 2, 3


@njit(cache=True, parallel=True, fastmath=set(FASTMATH))
def dot_kernel_inplace(K, code, gamma, coef0, degree, row_scale, col_scale):
    """Turn the Gram matrix ``K`` (m, n) into kernel values in place. O(m n).

    ``row_scale`` / ``col_scale`` are the inverse row norms for the cosine kernel (unused
    otherwise). Parallel over rows; each iteration writes only its own row.
    """
    m, n = K.shape
    for i in prange(m):
        for j in range(n):
            v = np.float64(K[i, j])
            if code == POLY:
                v = (gamma * v + coef0) ** degree
            elif code == SIGMOID:
                v = np.tanh(gamma * v + coef0)
            elif code == COSINE:
                v = v * row_scale[i] * col_scale[j]
            K[i, j] = v


@njit(cache=True)
def _row_of_iteration(p, s, m, upper):
    """Row handled by step ``s`` (0 or 1) of parallel iteration ``p``; -1 when none.

    With ``upper`` (only ``j >= i`` computed) iteration p takes rows p and m - 1 - p, so
    every iteration does the same amount of work.
    """
    p = np.int64(p)  # a prange index may arrive unsigned; keep the arithmetic signed
    if s == 0:
        return p
    if not upper:
        return -1
    i = m - 1 - p
    return i if i != p else -1


@njit(cache=True, inline="always")
def _gaussian_into(sq, gamma, values, scratch, target):
    """``target[j] = exp(-gamma sq[j])``; ``sq`` is scaled by gamma in place. O(len(sq)).

    ``values`` and ``scratch`` are float64 buffers of the same length, distinct from ``sq``
    (see :func:`fastdr._kernels.vexp.exp_shifted`); ``target`` may have any float dtype.
    Inlined into the parallel loops, so the code they run is the code written there before.
    """
    for j in range(sq.shape[0]):
        sq[j] *= gamma
    exp_shifted(sq, 0.0, values, scratch)
    for j in range(sq.shape[0]):
        target[j] = values[j]


@njit(cache=True, parallel=True)
def rbf_direct(Q, Tt, gamma, upper, out):
    """Fill ``out`` (m, n) with ``exp(-gamma |q_i - t_j|^2)`` from exact float64 sums.

    ``Tt`` is T transposed, (d, n) float64, so the inner loops run along j and vectorise.
    ``upper``: Q is T and only ``j >= i`` is written (complete with
    :func:`mirror_upper_to_lower`). Parallel over (pairs of) rows; each iteration writes only
    its own rows. Time O(m n d), memory O(n) per iteration.
    """
    m = Q.shape[0]
    d, n = Tt.shape
    n_iter = (m + 1) // 2 if upper else m
    for p in prange(n_iter):
        acc = np.empty(n)
        expo = np.empty(n)
        scratch = np.empty(n)
        for s in range(2):
            i = _row_of_iteration(p, s, m, upper)
            if i < 0:
                break
            j0 = i if upper else 0
            row = acc[j0:]
            width = row.shape[0]
            for j in range(width):
                row[j] = 0.0
            for f in range(d):
                qf = np.float64(Q[i, f])
                t_row = Tt[f, j0:]
                for j in range(width):
                    diff = qf - t_row[j]
                    row[j] += diff * diff
            _gaussian_into(row, gamma, expo[j0:], scratch[j0:], out[i, j0:])


@njit(cache=True, parallel=True)
def rbf_from_gram_inplace(K, Q, T, q_norms, t_norms, tol, gamma, upper):
    """Turn ``K = (Q - c)(T - c)^T`` (from one BLAS call) into ``exp(-gamma |q - t|^2)``.

    ``|q - t|^2 = |q - c|^2 + |t - c|^2 - 2 K_ij`` (the norm trick of
    :mod:`fastdr._kernels.distances.euclidean`, on rows centred on a common ``c``); values below
    ``tol * (|q - c|^2 + |t - c|^2)`` may have cancelled and are recomputed exactly before
    the exponential. ``upper``: Q is T and only ``j >= i`` is transformed (complete with
    :func:`mirror_upper_to_lower`). Parallel over (pairs of) rows; each iteration writes only
    its own rows, so K is the only large array. Time O(m n) (plus O(d) per recomputed entry).
    """
    m, n = K.shape
    n_iter = (m + 1) // 2 if upper else m
    for p in prange(n_iter):
        acc = np.empty(n)
        expo = np.empty(n)
        scratch = np.empty(n)
        for s in range(2):
            i = _row_of_iteration(p, s, m, upper)
            if i < 0:
                break
            j0 = i if upper else 0
            qn = q_norms[i]
            row = acc[j0:]
            width = row.shape[0]
            gram = K[i, j0:]
            norms = t_norms[j0:]
            for j in range(width):
                row[j] = qn + norms[j] - 2.0 * np.float64(gram[j])
            for j in range(width):
                if row[j] < tol * (qn + norms[j]):
                    row[j] = sqdist_exact(Q[i], T[j0 + j])
            _gaussian_into(row, gamma, expo[j0:], scratch[j0:], gram)


@njit(cache=True, parallel=True)
def mirror_upper_to_lower(A):
    """Copy the upper triangle of the square A onto its lower triangle, in place. O(m^2).

    64 x 64 tiles keep the transposed reads in cache. Parallel over pairs of tile rows
    (balanced work); each iteration writes only the rows of its own tiles.
    """
    m = A.shape[0]
    tile = 64
    n_tiles = (m + tile - 1) // tile
    for p in prange((n_tiles + 1) // 2):
        for s in range(2):
            ti = _row_of_iteration(p, s, n_tiles, True)
            if ti < 0:
                break
            i0 = ti * tile
            i1 = min(m, i0 + tile)
            for tj in range(ti + 1):
                j0 = tj * tile
                for i in range(i0, i1):
                    for j in range(j0, min(i, j0 + tile)):
                        A[i, j] = A[j, i]


@njit(cache=True, parallel=True)
def centre_kernel_rows(K, train_row_means, train_grand_mean):
    """Centre new kernel rows against the training kernel, in place. O(n m).

    ``K[i, j] <- K[i, j] - mean_l K[i, l] - train_row_means[j] + train_grand_mean``: the
    kernel between the new point i and the training point j in the centred feature space.
    Parallel over rows (each writes only its own row).
    """
    n, m = K.shape
    for i in prange(n):
        acc = 0.0
        for j in range(m):
            acc += np.float64(K[i, j])
        row_mean = acc / m
        for j in range(m):
            K[i, j] = np.float64(K[i, j]) - row_mean - train_row_means[j] + train_grand_mean
