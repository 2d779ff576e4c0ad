"""``algorithm="nndescent"`` for the neighbours estimators: parameters, build and search.

The estimators search ``_fit_X`` (already in metric space) with the squared Euclidean
distance, so that their usual squared-to-reported conversion applies unchanged. The fitted
index keeps the k-NN graph of the training points: self-queries slice it, new points go
through :func:`~fastdr.neighbors._nndescent.nndescent_query`.
"""

import numpy as np

from .._validation.params import check_scalar
from ._nndescent import nndescent_index, nndescent_query

#: Keys accepted in ``algorithm_params`` (``epsilon`` is the query breadth, the rest go to
#: :func:`~fastdr.neighbors._nndescent.nndescent_index`).
PARAM_KEYS = ("n_trees", "n_iters", "max_candidates", "delta", "leaf_size", "build_neighbors",
              "epsilon", "random_state")
DEFAULT_EPSILON = 0.1
#: The estimators' default seed, so that a fit is repeatable (``None`` draws a fresh one).
DEFAULT_RANDOM_STATE = 0


def check_params(algorithm_params, name="algorithm_params"):
    """Validate the keys (and ``epsilon``) of ``algorithm_params``; return a plain dict."""
    params = {} if algorithm_params is None else dict(algorithm_params)
    unknown = sorted(str(key) for key in params if key not in PARAM_KEYS)
    if unknown:
        raise ValueError(
            f"{name} has unknown key(s) {', '.join(repr(k) for k in unknown)}. The accepted "
            f"keys (all for algorithm='nndescent') are {', '.join(PARAM_KEYS)}."
        )
    if "epsilon" in params:
        check_scalar(params["epsilon"], "epsilon", "real", min_value=0)
    return params


def no_radius_error(what="algorithm"):
    """The error of a radius search asked of NN-descent."""
    return ValueError(
        f"{what}='nndescent' has no radius search: NN-descent builds approximate k-NN graphs "
        f"only. Use {what}='brute' or {what}='kd_tree' for radius queries and epsilon graphs."
    )


def build(fit_X, k, params, *, n_jobs, verbose=0):
    """The NN-descent index of ``fit_X`` (squared Euclidean, each point excluding itself).

    Parameters
    ----------
    fit_X : ndarray of shape (m, d), m >= 2
    k : int
        Graph degree, at most m - 1.
    params : dict
        From :func:`check_params`; ``epsilon`` is left out here.
    n_jobs : int or None
    verbose : int, default=0

    Returns
    -------
    NNDescentIndex
    """
    kwargs = {key: value for key, value in params.items() if key != "epsilon"}
    kwargs.setdefault("random_state", DEFAULT_RANDOM_STATE)
    return nndescent_index(fit_X, k, metric="sqeuclidean", n_jobs=n_jobs, verbose=verbose,
                           **kwargs)


def search(index, fit_X, Q, k, params, *, self_query, n_jobs):
    """Approximate squared distances (float64) and indices of the k nearest training points.

    ``self_query``: slice the stored graph when it has at least k columns, otherwise build a
    k-graph with the same parameters (the fitted index is not changed). New points: a graph
    search of the index with the ``epsilon`` of ``params``.
    """
    if self_query:
        if k <= index.neighbor_indices_.shape[1]:
            sq = index.neighbor_distances_[:, :k]
            ind = index.neighbor_indices_[:, :k]
        else:
            bigger = build(fit_X, k, params, n_jobs=n_jobs)
            sq, ind = bigger.neighbor_distances_, bigger.neighbor_indices_
        return sq.astype(np.float64), np.ascontiguousarray(ind)
    epsilon = params.get("epsilon", DEFAULT_EPSILON)
    sq, ind = nndescent_query(index, Q, k, epsilon, n_jobs=n_jobs)
    return sq.astype(np.float64), ind
