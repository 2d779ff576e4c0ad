"""Neighbourhood Components Analysis over dask arrays: L-BFGS on the client, map-reduce evals.

The objective ``f(A) = sum_i p_i`` and its gradient are sums over the rows i (each row's
softmax runs over all m points), so one evaluation is a map over the in-memory kernel's fixed
chunks of rows, each task running :func:`fastdr.metric_learning._nca.nca_chunk_partials` on
one chunk, and one merge of the partial sums in chunk order
(:func:`~fastdr.metric_learning._nca.nca_merge_chunks`). The points (grouped by class, as in
memory) are gathered once into one array on the cluster and replicated to every worker; each
evaluation then ships only ``A`` (r x d) out and each task's partial sums back.
"""

import dask
import numpy as np
import scipy.optimize

from .._base import BaseEstimator, TransformerMixin
from .._validation.arrays import check_is_fitted
from .._validation.params import check_option, check_random_state, check_scalar
from ..metric_learning._nca import (
    INITS,
    initial_components,
    nca_chunk_partials,
    nca_merge_chunks,
    row_partition,
)
from ._utils import (
    as_dask_classified,
    as_dask_queries,
    broadcast,
    check_n_jobs,
    map_linear,
    row_blocks,
)


def gather(*blocks):
    """All rows in one C-contiguous float64 array."""
    return np.ascontiguousarray(np.concatenate(blocks, axis=0), dtype=np.float64)


def take_rows(X, order):
    """The rows of X reordered by ``order`` (grouped by class, as in memory)."""
    return np.ascontiguousarray(X[order])


def initial_map(params, X, codes, r):
    """The in-memory estimator's starting map (its own rule, PCA and LDA), on a worker."""
    return initial_components(X, codes, r, init=params["init"],
                              n_components=params["n_components"],
                              rng=check_random_state(params["random_state"]))


class NeighborhoodComponentsAnalysis(TransformerMixin, BaseEstimator):
    """NCA of a row-chunked dask array: the same map as the in-memory estimator, to 1e-8.

    Parameters
    ----------
    n_components : int or None, default=None
    init : {"auto", "pca", "lda", "identity", "random"} or ndarray, default="auto"
        As in :class:`fastdr.NeighborhoodComponentsAnalysis`, computed by the in-memory
        estimator's own rule in one task on the gathered points (so the start is the
        in-memory start, bit for bit).
    max_iter : int, default=50
    tol : float, default=1e-5
    callback : callable or None, default=None
        Called as ``callback(transformation, n_iter)`` after every L-BFGS iteration, with
        the current map flattened to shape (r * d,), as the in-memory estimator (and
        scikit-learn) call it.
    random_state : int, RandomState, Generator or None, default=None
    n_jobs : int or None, default=None
        Threads per task; None means the cores of the worker that runs it.

    Attributes
    ----------
    components_ : ndarray of shape (r, n_features)
    n_iter_ : int
    objective_ : float
    classes_ : ndarray
    n_features_in_ : int

    Notes
    -----
    Only L-BFGS (the in-memory default) is distributed. Each evaluation costs
    O(m^2 r + m d^2) work spread over the row blocks; every worker holds the m x d points
    (float64) once; the client holds the labels (O(m)) and O(r d).
    """

    def __init__(self, *, n_components=None, init="auto", max_iter=50, tol=1e-5,
                 callback=None, random_state=None, n_jobs=None):
        self.n_components = n_components
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.callback = callback
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Learn the map A by L-BFGS with distributed objective evaluations.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features), chunked by rows
        y : dask or NumPy array of shape (n_samples,)

        Returns
        -------
        self
        """
        check_scalar(self.n_components, "n_components", "int", min_value=1, allow_none=True)
        if isinstance(self.init, str):
            check_option(self.init, "init", INITS)
        check_scalar(self.max_iter, "max_iter", "int", min_value=1)
        check_scalar(self.tol, "tol", "real", min_value=0)
        check_n_jobs(self.n_jobs)
        if self.callback is not None and not callable(self.callback):
            raise ValueError(f"callback must be callable or None; got {self.callback!r}.")
        X, classes, codes = as_dask_classified(X, y, "NeighborhoodComponentsAnalysis")
        m, d = X.shape
        if classes.shape[0] < 2:
            raise ValueError(
                f"NeighborhoodComponentsAnalysis needs at least 2 classes; y has a single "
                f"class ({classes[0]!r}). Pass labels of two or more classes."
            )
        r = d if self.n_components is None else self.n_components
        if r > d:
            raise ValueError(
                f"n_components={r} is larger than n_features={d}: NCA learns a map of at most "
                f"n_features rows. Pass n_components <= {d}."
            )
        X_orig = dask.delayed(gather, pure=True)(*row_blocks(X))
        params = {"n_components": self.n_components, "init": self.init,
                  "random_state": self.random_state}
        A0 = dask.compute(dask.delayed(initial_map)(params, X_orig, codes, r))[0]
        order = np.argsort(codes, kind="stable")
        sorted_codes = np.ascontiguousarray(codes[order], dtype=np.int64)
        X_all = broadcast(dask.delayed(take_rows, pure=True)(X_orig, order))
        codes_all = broadcast(dask.delayed(sorted_codes, pure=True))
        # the in-memory kernel's fixed partition of the rows (see nca_objective_gradient)
        block, n_chunks = row_partition(m, m)

        def evaluate(A):
            parts = [dask.delayed(nca_chunk_partials)(X_all, codes_all, A, c, n_chunks, block)
                     for c in range(n_chunks)]
            return dask.compute(dask.delayed(nca_merge_chunks)(X_all, A, *parts))[0]

        state = {"n_iter": 0}

        def negative_objective(a_flat):
            objective, gradient = evaluate(np.ascontiguousarray(a_flat.reshape(r, d)))
            return -objective, -gradient.ravel()

        def on_iteration(intermediate_result):
            state["n_iter"] += 1
            if self.callback is not None:
                self.callback(intermediate_result.x.copy(), state["n_iter"])

        result = scipy.optimize.minimize(
            negative_objective, A0.ravel(), method="L-BFGS-B", jac=True, tol=self.tol,
            options={"maxiter": self.max_iter}, callback=on_iteration,
        )
        if not result.success:
            import warnings

            from ..exceptions import ConvergenceWarning, compatible

            warnings.warn(
                f"[{type(self).__name__}] NCA did not converge: {result.message}. Increase "
                "max_iter, or loosen tol.",
                compatible(ConvergenceWarning), stacklevel=2,
            )
        self.components_ = np.ascontiguousarray(result.x.reshape(r, d))
        self.n_iter_ = int(result.nit)
        self.objective_ = -float(result.fun)
        self.classes_ = classes
        self.n_features_in_ = int(d)
        return self

    def get_mahalanobis_matrix(self):
        """Return the learned Mahalanobis matrix ``M = A^T A``.

        Returns
        -------
        ndarray of shape (d, d)
            ``components_.T @ components_`` in float64.
        """
        check_is_fitted(self, "components_")
        return self.components_.T @ self.components_

    def transform(self, X):
        """Lazy ``X A^T`` with X's row chunks.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)

        Returns
        -------
        dask array of shape (n_samples, n_components)
        """
        check_is_fitted(self, "components_")
        X = as_dask_queries(X, self, "NeighborhoodComponentsAnalysis", "transform")
        return map_linear(X, self.components_)
