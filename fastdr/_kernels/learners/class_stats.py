"""Per-class sums and centred row blocks for linear discriminant analysis.

Rows are never copied per class: sums run over the rows once in place, and scatter matrices
are built from small row blocks (centred, optionally scaled) fed to BLAS ``syrk``.
"""

import numpy as np
from numba import njit, prange

from ..._config import GATHER_CHUNK_ROWS


@njit(cache=True, parallel=True)
def _add_class_columns(X, codes, means, out):
    """Add to ``out[codes[i]]`` every row ``X[i]`` (``means`` None) or its squared deviation
    ``(X[i] - means[codes[i]])^2``, in float64. O(m d).

    Parallel over chunks of 8 columns: each iteration scans every row but reads and writes
    only its own columns, so no per-thread buffers are needed and the sums do not depend on
    the thread count. Whether ``means`` is None is settled when numba compiles the call, so
    the test costs nothing per entry.
    """
    m, d = X.shape
    width = 8
    n_chunks = (d + width - 1) // width
    for c in prange(n_chunks):
        f0 = c * width
        f1 = min(d, f0 + width)
        for i in range(m):
            k = codes[i]
            for f in range(f0, f1):
                if means is None:
                    out[k, f] += np.float64(X[i, f])
                else:
                    diff = np.float64(X[i, f]) - means[k, f]
                    out[k, f] += diff * diff


@njit(cache=True)
def class_sums(X, codes, n_classes):
    """Per-class column sums in float64, shape (n_classes, d). O(m d), parallel over
    columns (:func:`_add_class_columns`)."""
    out = np.zeros((n_classes, X.shape[1]), dtype=np.float64)
    _add_class_columns(X, codes, None, out)
    return out


@njit(cache=True)
def class_centred_sumsq(X, codes, means):
    """Per-class sums of squared deviations from the class means, shape (k, d). O(m d),
    parallel over columns (:func:`_add_class_columns`)."""
    out = np.zeros(means.shape, dtype=np.float64)
    _add_class_columns(X, codes, means, out)
    return out


@njit(cache=True)
def gather_centre_rows(X, rows, start, centre, inv_scale, out, sq_norms, r0, r1):
    """Serial worker of :func:`gather_centre_block` for the block rows ``r0..r1``.

    Also called directly, without a parallel launch, for a small block (see
    :func:`fastdr.discriminant._class_scatter.gather_centre`).
    """
    d = out.shape[1]
    for r in range(r0, r1):
        i = rows[start + r]
        acc = 0.0
        for f in range(d):
            v = (np.float64(X[i, f]) - centre[f]) * inv_scale[f]
            out[r, f] = v
            acc += v * v
        sq_norms[r] = acc


@njit(cache=True, parallel=True)
def gather_centre_block(X, rows, start, centre, inv_scale, out, sq_norms):
    """``out[r] = (X[rows[start + r]] - centre) * inv_scale``; ``sq_norms[r] = |out[r]|^2``.

    Parallel over chunks of ``GATHER_CHUNK_ROWS`` rows; each writes only its own rows (the
    same values for any thread count). O(rows d).
    """
    n_rows = out.shape[0]
    n_chunks = (n_rows + GATHER_CHUNK_ROWS - 1) // GATHER_CHUNK_ROWS
    for c in prange(n_chunks):
        r0 = c * GATHER_CHUNK_ROWS
        gather_centre_rows(X, rows, start, centre, inv_scale, out, sq_norms, r0,
                           min(n_rows, r0 + GATHER_CHUNK_ROWS))
