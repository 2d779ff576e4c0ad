"""What every exact search (dense, sparse, other metrics) shares: how the queries are cut into
parallel blocks, and how a point is kept out of its own neighbours.
"""

import numpy as np

from .._config import QUERY_BLOCK_ROWS


def self_offset(self_query):
    """The self-exclusion argument of the search kernels.

    A query of the training set itself (``kneighbors()`` or ``radius_neighbors()`` with
    ``X=None``) excludes each point from its own neighbours *by index*, never by distance:
    a duplicate of the point is still its neighbour, at distance 0, as in scikit-learn.
    Every kernel takes the rule as one integer, ``self_offset``: query row ``r`` skips
    target ``r + self_offset``, and -1 skips nothing. A self query passes 0; a kernel
    called on the query rows ``lo:hi`` of a self query passes ``lo``. The other forms
    derive from it: the float32 screen takes one skipped target per row
    (:func:`skip_targets`), the sparse kernels take the offset with ``self_mode`` 1, and
    the k-d tree drops the same index from its answers.

    Parameters
    ----------
    self_query : bool
        The queries are the training rows, each excluding itself.

    Returns
    -------
    int
        0 for a self query, else -1.
    """
    return 0 if self_query else -1


def skip_targets(m, offset):
    """The target each of m query rows skips under ``offset`` (see :func:`self_offset`):
    ``r + offset``, or -1 for every row when offset is -1. O(m)."""
    if offset < 0:
        return np.full(m, -1, dtype=np.int64)
    return np.arange(offset, offset + m, dtype=np.int64)


def query_block(m, threads, bounds=QUERY_BLOCK_ROWS):
    """Query rows per parallel iteration: about 4 iterations per thread, within
    ``bounds`` (``QUERY_BLOCK_ROWS``, ``SPARSE_QUERY_BLOCK_ROWS`` or
    ``NNDESCENT_QUERY_BLOCK_ROWS`` of :mod:`fastdr._config`, each with its reason).

    Four iterations a thread balance uneven rows. The block only schedules the work: every
    query row's result is the same for any block.

    Parameters
    ----------
    m : int
        Query rows.
    threads : int
        Threads of the parallel section.
    bounds : tuple of int
        ``(smallest, largest)``.

    Returns
    -------
    int
    """
    smallest, largest = bounds
    return int(max(smallest, min(largest, -(-m // (4 * threads)))))
