"""Defaults of NN-descent: size-dependent parameters, the adaptive build width, seeds.

:func:`default_parameters` fills ``None`` parameters from the number of points and k;
:func:`intrinsic_dimension` estimates how hard the data is from a k-NN graph, and
:func:`adaptive_build_neighbors` turns that into the heap width of the build.
"""

import math
import numbers

import numpy as np

from .._kernels import nndescent as kernels


def default_parameters(m, n_neighbors):
    """The defaults used for ``None`` parameters, as a dict.

    Parameters
    ----------
    m : int
        Number of points.
    n_neighbors : int

    Returns
    -------
    dict
        ``n_trees = max(3, min(12, round(2 log10 m)))``, ``n_iters = max(5, round(log2 m))``,
        ``max_candidates = min(60, max(15, n_neighbors))``,
        ``leaf_size = max(60, min(256, 5 n_neighbors))``. On data of high intrinsic
        dimension the build also widens its heaps (:func:`adaptive_build_neighbors`) and
        then samples ``max(max_candidates, min(60, ceil(3 build_neighbors / 4)))``
        candidates.
    """
    return {
        "n_trees": int(max(3, min(12, round(2 * math.log10(max(m, 2)))))),
        "n_iters": int(max(5, round(math.log2(max(m, 2))))),
        "max_candidates": int(min(60, max(15, n_neighbors))),
        "leaf_size": int(max(60, min(256, 5 * n_neighbors))),
    }


def intrinsic_dimension(heap_d, key_code):
    """Maximum-likelihood intrinsic dimension of the k-graph held in the heaps.

    Levina and Bickel's estimate from each point's k neighbour distances, its inverse
    averaged over the points (MacKay and Ghahramani). Points with a zero or missing distance
    are left out; 0.0 when nothing can be estimated (k < 2 or no such point).

    Parameters
    ----------
    heap_d : ndarray of shape (m, k)
        Selection keys: squared Euclidean (``key_code`` 0) or L1 distances.
    key_code : int

    Returns
    -------
    float
    """
    k = heap_d.shape[1]
    if k < 2:
        return 0.0
    keys = np.sort(heap_d.astype(np.float64), axis=1)
    keep = np.isfinite(keys[:, -1]) & (keys[:, 0] > 0)
    if not keep.any():
        return 0.0
    keys = keys[keep]
    inverse = np.log(keys[:, -1:] / keys[:, :-1]).mean()
    if key_code == kernels.KEY_SQEUCLIDEAN:
        inverse *= 0.5
    return float(1.0 / inverse) if inverse > 0 else 0.0


def adaptive_build_neighbors(dimension, n_neighbors, m):
    """The heap width of the build for ``build_neighbors=None``.

    Neighbours of neighbours find the true neighbours less often as the intrinsic dimension
    grows, so wider heaps are kept on hard data, then cut to ``n_neighbors``:
    ``n_neighbors`` while the estimated dimension is at most 12, else
    ``ceil(max(n_neighbors, 15) * min(3, dimension / 9))``, at most ``max(n_neighbors, 60)`` and
    ``m - 1``.

    Parameters
    ----------
    dimension : float
        From :func:`intrinsic_dimension`.
    n_neighbors : int
    m : int

    Returns
    -------
    int
    """
    if dimension <= 12.0:
        return n_neighbors
    wide = math.ceil(max(n_neighbors, 15) * min(3.0, dimension / 9.0))
    return int(max(n_neighbors, min(wide, max(n_neighbors, 60), m - 1)))


def _seed_from(random_state):
    """A uint64 seed from None, an int, a RandomState or a Generator."""
    if random_state is None or (isinstance(random_state, numbers.Integral)
                                and not isinstance(random_state, bool)):
        if random_state is not None and random_state < 0:
            raise ValueError(
                f"random_state must be a non-negative int, None, or a numpy "
                f"RandomState/Generator; got {random_state!r}."
            )
        rng = np.random.default_rng(random_state)
        return int(rng.integers(0, 2**63 - 1))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1)) * 2**31 + int(
            random_state.randint(0, 2**31 - 1))
    raise TypeError(
        f"random_state must be None, an int, or a numpy RandomState/Generator; "
        f"got {random_state!r} of type {type(random_state).__name__}."
    )
