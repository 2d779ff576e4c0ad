"""Checks that keep distance kernels safe: magnitudes that would overflow or underflow
squared distances, "no neighbour" markers from trees and heaps, and user-supplied graphs.

Every entry that computes distances calls :func:`check_distance_magnitude` on its input;
every index that comes from a tree or a heap passes :func:`check_neighbor_indices` before
a kernel reads through it.
"""

import numpy as np


def check_neighbor_indices(indices, distances, n_samples, what):
    """Check indices returned by a tree or a heap before any kernel reads through them.

    Parameters
    ----------
    indices : ndarray of int
        Neighbour indices; each must lie in ``[0, n_samples)``.
    distances : ndarray or None
        Their distances; each must be finite (inf or NaN marks "no neighbour found").
    n_samples : int
        The number of points searched.
    what : str
        The search, for the message.

    Raises
    ------
    ValueError
        When an index is out of range or a distance is not finite.
    """
    bad = (indices < 0) | (indices >= n_samples)
    if distances is not None:
        bad |= ~np.isfinite(distances)
    if bad.any():
        raise ValueError(
            f"{what} returned {int(bad.sum())} 'no neighbour' marker(s) (an index outside "
            f"[0, {n_samples}) or an infinite distance), so the distances overflowed or the "
            "search failed. Scale the data (for example with "
            "sklearn.preprocessing.StandardScaler) and try again."
        )



def check_sparse_graph(graph, name="graph"):
    """Validate a user-supplied sparse graph before any kernel walks it; return it as CSR.

    A CSR matrix built from raw ``(data, indices, indptr)`` arrays is not checked by scipy,
    and a kernel reading an out-of-range column index reads foreign memory.

    Parameters
    ----------
    graph : scipy sparse matrix of shape (m, m)
        Non-negative, finite edge lengths.
    name : str
        How the graph is called in the messages.

    Returns
    -------
    scipy.sparse.csr_matrix
    """
    import scipy.sparse

    from .sparse import check_structure

    if scipy.sparse.issparse(graph):
        check_structure(graph, name)
    csr = scipy.sparse.csr_matrix(graph)
    if csr.shape[0] != csr.shape[1]:
        raise ValueError(f"{name} must be square, got shape {csr.shape}.")
    try:
        csr.check_format(full_check=True)
    except ValueError as exc:
        raise ValueError(
            f"{name} is not a valid CSR matrix ({exc}): its column indices must lie in "
            f"[0, {csr.shape[1]}) and its indptr must be non-decreasing. Rebuild it, for "
            "example with scipy.sparse.csr_matrix((data, (rows, cols)), shape=(m, m))."
        ) from None
    if csr.nnz and not np.isfinite(csr.data).all():
        raise ValueError(
            f"{name} has NaN or infinite edge lengths; store only finite lengths (a missing "
            "edge is an entry that is not stored)."
        )
    if csr.nnz and (csr.data < 0).any():
        raise ValueError(f"{name} has negative edge lengths; shortest paths need lengths >= 0.")
    return csr

