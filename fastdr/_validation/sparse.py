"""The one checked entry for scipy sparse input: every sparse matrix or array a user passes
goes through :func:`check_sparse` before scipy or a kernel reads it.

scipy does not check the index arrays of a matrix built from raw ``(data, indices, indptr)``
or ``(data, (row, col))`` arrays, or edited after construction, and its own conversions and
products read through them in C: a decreasing ``indptr`` or an out-of-range index is a
segfault, a heap corruption or a silently wrong result, not an exception. So the raw arrays of
each format are checked first, and only then converted or handed on.
"""

import numpy as np
import scipy.sparse

_REMEDY = ("Rebuild it, for example with scipy.sparse.csr_matrix((data, (rows, cols)), "
           "shape=shape).")


def _check_compressed(indptr, indices, n_major, n_minor, name, what):
    """Bounds of a compressed (CSR, CSC, BSR) structure; returns the number of entries."""
    indptr = np.asarray(indptr)
    indices = np.asarray(indices)
    if indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu":
        raise TypeError(f"{name} is not a valid sparse matrix: its indptr and indices must "
                        f"be integers, got {indptr.dtype} and {indices.dtype}. {_REMEDY}")
    if indptr.ndim != 1 or indptr.shape[0] != n_major + 1:
        raise ValueError(f"{name} is not a valid sparse matrix: indptr must have "
                         f"{n_major + 1} entries, got shape {indptr.shape}. {_REMEDY}")
    if indptr[0] != 0 or (np.diff(indptr) < 0).any():
        raise ValueError(f"{name} is not a valid sparse matrix: indptr must start at 0 and "
                         f"be non-decreasing. {_REMEDY}")
    nnz = int(indptr[-1])
    if indices.ndim != 1 or indices.shape[0] < nnz:
        raise ValueError(f"{name} is not a valid sparse matrix: indptr ends at {nnz} but "
                         f"indices has {indices.shape[0]} entries. {_REMEDY}")
    used = indices[:nnz]
    if nnz and (used.min() < 0 or used.max() >= n_minor):
        raise ValueError(f"{name} is not a valid sparse matrix: its {what} indices must lie "
                         f"in [0, {n_minor}), got values in [{used.min()}, {used.max()}]. "
                         f"{_REMEDY}")
    return nnz


def _check_coordinates(X, name):
    """Bounds of a COO structure; returns the number of entries."""
    coords = [np.asarray(c) for c in X.coords]
    nnz = coords[0].shape[0]
    for arr, limit, what in zip(coords, X.shape, ("row", "column"), strict=True):
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} is not a valid sparse matrix: its {what} indices must be "
                            f"integers, got {arr.dtype}. {_REMEDY}")
        if arr.ndim != 1 or arr.shape[0] != nnz:
            raise ValueError(f"{name} is not a valid sparse matrix: its row and column index "
                             f"arrays differ in length. {_REMEDY}")
        if nnz and (arr.min() < 0 or arr.max() >= limit):
            raise ValueError(f"{name} is not a valid sparse matrix: its {what} indices must "
                             f"lie in [0, {limit}), got values in [{arr.min()}, {arr.max()}]. "
                             f"{_REMEDY}")
    return nnz


def check_structure(X, name="X"):
    """Check the raw index arrays of any sparse format; return X unchanged.

    CSR, CSC, BSR and COO are checked as they are stored. DIA, LIL and DOK keep their
    indices in Python-level structures whose conversion scipy checks itself; their CSR form
    is checked again by :func:`check_sparse`.

    Parameters
    ----------
    X : scipy sparse matrix or array
    name : str
        How X is called in the messages.

    Returns
    -------
    The same object.
    """
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D sparse matrix for {name}, got shape {X.shape}.")
    m, d = X.shape
    fmt = X.format
    if fmt == "csr":
        nnz = _check_compressed(X.indptr, X.indices, m, d, name, "column")
    elif fmt == "csc":
        nnz = _check_compressed(X.indptr, X.indices, d, m, name, "row")
    elif fmt == "bsr":
        R, C = X.blocksize
        nnz = _check_compressed(X.indptr, X.indices, m // R, d // C, name, "block column")
    elif fmt == "coo":
        nnz = _check_coordinates(X, name)
    else:
        return X
    stored = np.asarray(X.data).shape[0]
    if stored < nnz:
        raise ValueError(f"{name} is not a valid sparse matrix: it stores {nnz} indices but "
                         f"only {stored} values. {_REMEDY}")
    return X


def _is_canonical(compressed):
    """Minor indices strictly increasing within every major slice (checked, not trusted)."""
    indices, indptr = compressed.indices, compressed.indptr
    if indices.shape[0] < 2:
        return True
    increasing = np.diff(indices) > 0
    starts = indptr[1:-1]
    starts = starts[(starts > 0) & (starts < indices.shape[0])]
    increasing[starts - 1] = True  # the step into a new slice may go down
    return bool(increasing.all())


def check_sparse(X, *, name="X", dtype=None, formats=("csr",), min_samples=1, copy=False,
                 index_dtype=np.int64):
    """Validate a sparse matrix and return it in canonical compressed form.

    Parameters
    ----------
    X : scipy sparse matrix or array of shape (m, d)
    name : str
        How X is called in the messages.
    dtype : numpy dtype or None
        The float dtype wanted; None keeps float32/float64 and makes anything else float64.
    formats : tuple of {"csr", "csc"}
        The formats kept as they are; any other is converted to the first.
    min_samples : int
        The fewest rows accepted.
    copy : bool
        Never share the data array with X.
    index_dtype : numpy dtype or None
        The dtype of ``indices`` and ``indptr`` (int64: numba kernels compile once); None
        keeps scipy's.

    Returns
    -------
    scipy.sparse.csr_matrix or csc_matrix
        Float data, all finite; ``indices`` and ``indptr`` of ``index_dtype``; indices
        sorted within each row (column), no duplicate entries, no surplus storage. X itself
        when it is already so (and not ``copy``); X's own arrays are never modified.
    """
    check_structure(X, name)
    m, d = X.shape
    if m < min_samples:
        raise ValueError(f"{name} has {m} sample(s) (shape {X.shape}), but at least "
                         f"{min_samples} {'is' if min_samples == 1 else 'are'} required.")
    if d < 1:
        raise ValueError(f"{name} has 0 feature(s) (shape={X.shape}) while a minimum of 1 is "
                         "required. Pass data with at least 1 column(s).")
    kind = np.dtype(X.dtype).kind
    if kind == "c":
        raise ValueError(f"Complex data not supported: {name} is complex (dtype {X.dtype}). "
                         f"Pass {name}.real or abs({name}) as appropriate.")
    if kind not in "fiub":
        raise TypeError(f"{name} holds non-numeric values (dtype {X.dtype}); pass a sparse "
                        "matrix of numbers.")
    fmt = X.format if X.format in formats else formats[0]
    if (not copy and X.format == fmt and X.dtype == (dtype or X.dtype)
            and X.dtype in (np.float32, np.float64)
            and index_dtype in (None, X.indices.dtype) and index_dtype in (None, X.indptr.dtype)
            and X.data.shape[0] == X.indptr[-1]
            and _is_canonical(X)):  # already in the form asked for: X itself, checked
        if not np.isfinite(X.data).all():
            _refuse_nonfinite(X.data, name)
        return X
    kind_class = scipy.sparse.csr_matrix if fmt == "csr" else scipy.sparse.csc_matrix
    converted = kind_class(X)
    if X.format not in ("csr", "csc", "bsr", "coo"):
        check_structure(converted, name)  # DIA, LIL, DOK: their compressed form
    if dtype is None:
        dtype = converted.dtype if converted.dtype in (np.float32, np.float64) else np.float64
    nnz = int(converted.indptr[-1])
    data = np.array(converted.data[:nnz], dtype=dtype, copy=copy or None)
    if not np.isfinite(data).all():
        _refuse_nonfinite(data, name)
    out = kind_class((data, converted.indices[:nnz], converted.indptr), shape=(m, d))
    if not _is_canonical(out):
        out = out.copy()  # never sort or sum the caller's arrays in place
        out.sum_duplicates()  # also sorts the indices
    if index_dtype is not None:  # scipy may pick int32 indices on construction
        out.indices = np.asarray(out.indices, dtype=index_dtype)
        out.indptr = np.asarray(out.indptr, dtype=index_dtype)
    return out


def _refuse_nonfinite(data, name):
    raise ValueError(f"{name} contains NaN or infinity ({int(np.isnan(data).sum())} NaN, "
                     f"{int(np.isinf(data).sum())} inf). Remove or impute those values "
                     "first, for example with sklearn.impute.SimpleImputer.")
