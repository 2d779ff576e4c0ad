"""Shared plumbing of ``fastdr.dask``: input checks, per-task threads, blocks, reductions.

Everything that runs on a worker goes through :func:`task_n_jobs`, which gives the kernels of
one task the cores of the worker that runs it (``Worker.nthreads``: its share of the machine),
set by the kernels' own ``parallel_section`` on the worker thread.
"""

import numbers

import dask
import dask.array as da
import numpy as np

from .._distance.metric import apply_linear_map
from .._validation.arrays import check_array, check_classification_targets, check_n_features

FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def task_n_jobs(n_jobs):
    """Threads for the kernels of the task now running.

    Parameters
    ----------
    n_jobs : int or None
        The estimator's ``n_jobs``; None means this worker's share of cores (the number of
        threads the worker was started with). Outside a ``distributed`` worker None means
        every core: concurrent tasks of the threaded scheduler do not oversubscribe, because
        on numba's TBB layer their launches share TBB's one pool of worker threads, and on
        workqueue they take turns behind fastdr's launch lock.

    Returns
    -------
    int or None
    """
    if n_jobs is not None:
        return n_jobs
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return None
    state = getattr(worker, "state", worker)
    return max(1, int(getattr(state, "nthreads", 1)))


def as_dask_rows(X, estimator, *, name="X", min_samples=1):
    """Validate a row-chunked dask array (or dask DataFrame) and put the features in one chunk.

    Parameters
    ----------
    X : dask.array.Array or dask.dataframe.DataFrame
    estimator : str
        The class name, for the error that points to the in-memory estimator.
    name : str
    min_samples : int

    Returns
    -------
    dask.array.Array
        Float32 or float64 (other numeric dtypes become float64), features in one chunk;
        every block is checked (finite values) when it is computed.
    """
    if hasattr(X, "to_dask_array") and not isinstance(X, da.Array):
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array):
        raise TypeError(
            f"fastdr.dask.{estimator} takes a dask array chunked by rows; got "
            f"{type(X).__module__}.{type(X).__name__}. For data in memory use "
            f"fastdr.{estimator}, or wrap it: dask.array.from_array({name}, chunks=(rows, -1))."
        )
    if X.ndim != 2:
        raise ValueError(
            f"Expected a 2-D dask array for {name}, got {X.ndim} dimension(s) (shape "
            f"{X.shape}). Reshape it to (n_samples, n_features)."
        )
    if any(np.isnan(c) for c in X.chunks[0]) or np.isnan(X.shape[1]):
        raise ValueError(
            f"{name} has unknown chunk sizes (shape {X.shape}); call "
            f"{name}.compute_chunk_sizes() first (or to_dask_array(lengths=True))."
        )
    if X.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must hold numbers; got dtype {X.dtype}. Convert it with "
            f"{name}.astype(float)."
        )
    if X.shape[0] < min_samples:
        raise ValueError(
            f"{name} has {X.shape[0]} sample(s), but at least {min_samples} are required."
        )
    if X.shape[1] < 1:
        raise ValueError(f"{name} has 0 features; pass data with at least one column.")
    dtype = X.dtype if X.dtype in FLOAT_DTYPES else np.dtype(np.float64)
    X = X.rechunk({1: -1})
    return X.map_blocks(_checked_block, name, dtype=dtype, meta=np.empty((0, 0), dtype))


def as_dask_queries(X, estimator, name, method):
    """Validate the input of a fitted estimator's method (any number of rows, the feature
    count seen in ``fit``), as :func:`as_dask_rows`.

    Parameters
    ----------
    X : dask.array.Array or dask.dataframe.DataFrame
    estimator : fitted estimator
        Its ``n_features_in_`` is the feature count expected.
    name : str
        The class name, as in :func:`as_dask_rows`.
    method : str
        The method's name, for the messages.

    Returns
    -------
    dask.array.Array
    """
    X = as_dask_rows(X, name, min_samples=0)
    check_n_features(estimator, X, method)
    return X


def _checked_block(block, name):
    return check_array(block, name=name, min_samples=0)


def as_dask_classified(X, y, estimator):
    """Validate a classifier's training data: X as :func:`as_dask_rows` (at least 2 rows), y
    as :func:`as_labels`, and y's classes.

    Parameters
    ----------
    X : dask.array.Array or dask.dataframe.DataFrame
    y : dask or NumPy array of shape (n_samples,)
    estimator : str
        The class name, as in :func:`as_dask_rows`.

    Returns
    -------
    X : dask.array.Array
    classes : ndarray of shape (n_classes,)
        The sorted labels (at least one).
    codes : ndarray of shape (n_samples,), int
        Each row's index into ``classes``.
    """
    X = as_dask_rows(X, estimator, min_samples=2)
    classes, codes = check_classification_targets(as_labels(y, X.shape[0]), min_classes=1)
    return X, classes, codes


def as_labels(y, n_samples, *, name="y"):
    """Bring labels or targets (dask or NumPy, O(m)) to the client as one NumPy array."""
    if hasattr(y, "to_dask_array") and not isinstance(y, da.Array):
        y = y.to_dask_array(lengths=True)
    if isinstance(y, da.Array):
        y = y.compute()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {y.shape[0]} entries, but X has {n_samples} samples; pass one "
            f"{name} per row of X."
        )
    return y


def _linear_map_block(block, linear_map):
    return apply_linear_map(block, linear_map)


def map_linear(X, linear_map):
    """Lazy ``X @ linear_map.T`` (an (r, d) matrix), block by block, with X's row chunks."""
    return X.map_blocks(_linear_map_block, linear_map,
                        chunks=(X.chunks[0], (linear_map.shape[0],)), dtype=X.dtype)


def _method_block(block, model, method, n_cols, dtype):
    if block.shape[0] == 0:  # the in-memory estimators refuse empty input
        return np.empty((0,) if n_cols is None else (0, n_cols), dtype=dtype)
    return getattr(model, method)(block)


def map_method(X, model, method, n_cols, dtype):
    """Lazy ``getattr(model, method)`` of each row block of X (an in-memory fitted model).

    Parameters
    ----------
    X : dask.array.Array
    model : fitted in-memory estimator
    method : str
    n_cols : int or None
        Columns of the result; None for a 1-D result.
    dtype : numpy dtype
        The result's dtype.

    Returns
    -------
    dask.array.Array
        With X's row chunks.
    """
    if n_cols is None:
        return X.map_blocks(_method_block, model, method, n_cols, dtype, drop_axis=1,
                            chunks=(X.chunks[0],), dtype=dtype)
    return X.map_blocks(_method_block, model, method, n_cols, dtype,
                        chunks=(X.chunks[0], (n_cols,)), dtype=dtype)


def row_offsets(X):
    """Start row of each row block of X (and the total at the end)."""
    return np.concatenate(([0], np.cumsum(X.chunks[0]))).astype(np.int64)


def row_blocks(X):
    """The row blocks of X as a list of ``dask.delayed`` objects."""
    return list(X.to_delayed().ravel())


def stack_rows(parts, row_chunks, n_cols, dtype):
    """Lazy (m, n_cols) array (or (m,) when n_cols is None) from one delayed part per block."""
    arrays = []
    for part, rows in zip(parts, row_chunks, strict=True):
        shape = (rows,) if n_cols is None else (rows, n_cols)
        arrays.append(da.from_delayed(part, shape=shape, dtype=dtype))
    return da.concatenate(arrays, axis=0)


def tree_reduce(parts, combine, split_every=4):
    """Combine delayed partial results pairwise-up a tree (``split_every`` at a time)."""
    if not parts:
        raise ValueError("Nothing to reduce.")
    level = list(parts)
    while len(level) > 1:
        level = [
            dask.delayed(combine)(*level[i:i + split_every]) if len(level[i:i + split_every]) > 1
            else level[i]
            for i in range(0, len(level), split_every)
        ]
    return level[0]


def worker_memory_limit():
    """Smallest worker memory limit in bytes, or the local memory budget without a cluster."""
    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        client = None
    if client is not None:
        limits = [w.get("memory_limit") or 0 for w in
                  client.scheduler_info().get("workers", {}).values()]
        limits = [int(v) for v in limits if v]
        if limits:
            return min(limits)
    from .._config import memory_budget

    return memory_budget()


def check_n_jobs(n_jobs):
    """Accept None or a nonzero int (as the in-memory estimators)."""
    if n_jobs is None:
        return
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a nonzero int; got {n_jobs!r}.")


def merge_moments(*parts):
    """Chan's merge of (count, mean, centred scatter) triples, all float64. O(d^2) each."""
    n, mean, scatter = parts[0]
    mean = mean.copy()
    scatter = scatter.copy()
    for n_b, mean_b, scatter_b in parts[1:]:
        if n_b == 0:
            continue
        if n == 0:
            n, mean, scatter = n_b, mean_b.copy(), scatter_b.copy()
            continue
        total = n + n_b
        delta = mean_b - mean
        scatter += scatter_b
        scatter += np.outer(delta, delta) * (n * n_b / total)
        mean += delta * (n_b / total)
        n = total
    return n, mean, scatter


def block_moments(block):
    """(count, mean, centred scatter) of one block, around its own mean, in float64."""
    d = block.shape[1]
    n = block.shape[0]
    if n == 0:
        return 0, np.zeros(d), np.zeros((d, d))
    centred = np.asarray(block, dtype=np.float64)
    mean = centred.mean(axis=0)
    centred = centred - mean
    return n, mean, centred.T @ centred


def broadcast(value):
    """Hold ``value`` (a Delayed) on every worker when a distributed client is running."""
    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        return dask.delayed(dask.compute(value)[0], pure=True)
    future = client.compute(value)
    client.replicate([future])
    return future
