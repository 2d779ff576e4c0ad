"""Neighbourhood Components Analysis (Goldberger et al., 2005)."""

import time
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.optimize

from .._base import BaseEstimator
from .._config import NCA_BLOCK_BYTES, NCA_MAX_CHUNKS
from .._kernels.learners import nca as nca_kernels
from .._runtime.blas import single_threaded_blas
from .._runtime.progress import IterationLog
from .._runtime.threads import parallel_section
from .._validation.feature_names import record_feature_names
from .._validation.params import Interval, StrOptions, check_random_state, validate_params
from ..exceptions import ConvergenceWarning, compatible
from ._base import LEARNER_CONSTRAINTS, MahalanobisMixin, check_labelled_data
from ._nca_init import check_init_array, lda_start, pca_start, resolve_init, timed_start

INITS = ("auto", "pca", "lda", "identity", "random")
OPTIMIZERS = ("lbfgs", "sgd")


def row_partition(m, n_rows):
    """Rows per block and the number of fixed chunks of the NCA kernel's row blocks.

    64 rows per GEMM keep BLAS efficient and amortise re-reading Z and X per block; for very
    large m fewer rows keep a block within ``NCA_BLOCK_BYTES``. The chunks never depend on
    the thread count, so neither does the result.

    Parameters
    ----------
    m : int
        Number of points (the softmax runs over all of them).
    n_rows : int
        Number of rows whose terms are summed.

    Returns
    -------
    block, n_chunks : int
    """
    block = int(np.clip(NCA_BLOCK_BYTES // (12 * m), 16, 64))
    n_blocks = -(-n_rows // block)
    return block, max(1, min(n_blocks, NCA_MAX_CHUNKS))


def nca_objective_gradient(X, A, codes, rows=None, *, n_jobs=None):
    """NCA objective ``sum_{i in rows} p_i`` and its gradient with respect to A.

    Parameters
    ----------
    X : ndarray of shape (m, d), float64, C-contiguous
    A : ndarray of shape (r, d), float64
    codes : ndarray of shape (m,), int64
        Class code of each row.
    rows : ndarray of int64 or None
        Rows i that enter the objective (a mini-batch); None means all. Each row's softmax
        runs over all m points.
    n_jobs : int or None
        Threads for this call.

    Returns
    -------
    objective : float
    gradient : ndarray of shape (r, d)

    Notes
    -----
    Time O(|rows| m r + candidates x d + m d^2) (the candidates are the pairs whose softmax
    term is above round-off; at most all of them), memory O(block m) per thread plus
    O(m (r + d)); the result is the same for any ``n_jobs``.
    """
    m = X.shape[0]
    if rows is None:
        # all rows in order (fit passes the points already grouped by class)
        rows = np.arange(m, dtype=np.int64)
    block, n_chunks = row_partition(m, rows.shape[0])
    A = np.ascontiguousarray(A, dtype=np.float64)
    with parallel_section(n_jobs):
        objective, gradient = nca_kernels.nca_objective_gradient(X, A, codes, rows, block,
                                                                 n_chunks)
    return float(objective), gradient


def nca_chunk_partials(X, codes, A, chunk, n_chunks, block):
    """One chunk of the NCA kernel's fixed row partition: its partial sums.

    The rows of all m points form blocks of ``block`` rows, split into ``n_chunks`` chunks
    of whole blocks (:func:`row_partition`), as :func:`nca_objective_gradient` splits them;
    the chunk runs the same serial kernel, so its partial sums are those of the in-memory
    evaluation, bit for bit (:func:`nca_merge_chunks` merges them; fastdr.dask runs one task
    per chunk). Time O(chunk rows x m r + candidates d), memory O(block m + m (r + d)).

    Parameters
    ----------
    X : ndarray of shape (m, d), float64, C-contiguous
        All points (grouped by class, as ``fit`` orders them).
    codes : ndarray of shape (m,), int64
    A : ndarray of shape (r, d), float64, C-contiguous
    chunk : int
        Which chunk, in ``[0, n_chunks)``.
    n_chunks, block : int
        As returned by :func:`row_partition`.

    Returns
    -------
    objective : float
        The chunk's sum of ``p_i``.
    S : ndarray of shape (d, d)
        The chunk's ``sum X_blk^T (W_blk X)``.
    colsum : ndarray of shape (m,)
        The chunk's column sums of W.
    start : int
        The first row of the chunk.
    rowsum : ndarray of shape (rows of the chunk,)
        The row sums of W of the chunk's rows.
    """
    m, d = X.shape
    Z, z_norms = nca_kernels._centred_projection(X, A)
    ZT = np.ascontiguousarray(Z.T)
    rows = np.arange(m, dtype=np.int64)
    n_blocks = -(-m // block)
    first = chunk * n_blocks // n_chunks
    last = (chunk + 1) * n_blocks // n_chunks
    colsum = np.zeros(m)
    rowsum = np.zeros(m)
    S = np.zeros((d, d))
    objective = nca_kernels._chunk_sums(X, Z, ZT, z_norms, codes.astype(np.float64),
                                        nca_kernels.NCA, rows, block, nca_kernels.AUTO, first,
                                        last, colsum, rowsum, S)
    start, stop = first * block, min(m, last * block)
    return objective, S, colsum, start, rowsum[start:stop]


def nca_merge_chunks(X, A, *chunks):
    """The NCA objective and its gradient from the partial sums of every chunk.

    Merged in chunk order, as :func:`nca_objective_gradient` merges its chunks. Time
    O(m d^2 + r d^2), memory O(m d).

    Parameters
    ----------
    X : ndarray of shape (m, d), float64
    A : ndarray of shape (r, d), float64
    *chunks : tuple
        :func:`nca_chunk_partials` of chunks ``0, 1, ..., n_chunks - 1``, in that order.

    Returns
    -------
    objective : float
    gradient : ndarray of shape (r, d)
    """
    m, d = X.shape
    rowsum = np.zeros(m)
    for _, _, _, start, part in chunks:
        rowsum[start:start + part.shape[0]] = part
    objective = 0.0
    S = np.zeros((d, d))
    degree = rowsum.copy()
    for value, S_c, colsum, _, _ in chunks:
        objective += value
        S += S_c
        degree += colsum
    H = np.dot((X * degree[:, None]).T, X) - S - S.T
    return objective, -2.0 * np.dot(A, H)


def initial_components(X, codes, r, *, init, n_components, rng, verbose=0):
    """The starting map of NCA: scikit-learn's rule for a named ``init``, or the array given.

    Parameters
    ----------
    X : ndarray of shape (m, d), float64
    codes : ndarray of shape (m,), int64
        Class codes ``0 .. n_classes - 1``.
    r : int
        Rows of the map.
    init : {"auto", "pca", "lda", "identity", "random"} or array-like of shape (r, d)
        ``"auto"`` picks ``"lda"``, ``"pca"`` or ``"identity"`` as scikit-learn does.
    n_components : int or None
        The estimator's ``n_components`` (for the check of an array ``init``).
    rng : numpy.random.RandomState or Generator
        Draws ``"random"`` and seeds the PCA start.
    verbose : int, default=0
        1 or more times the PCA or LDA start, as scikit-learn prints it.

    Returns
    -------
    ndarray of shape (r, d)

    Raises
    ------
    ValueError
        For ``init="lda"`` with more than ``min(d, n_classes - 1)`` rows, or a bad array.
    """
    m, d = X.shape
    if not isinstance(init, str):
        return check_init_array(init, d, n_components)
    n_classes = int(codes.max()) + 1
    init = resolve_init(init, r, m, d, n_classes)
    if init == "identity":
        return np.eye(r, d)
    if init == "random":
        return np.ascontiguousarray(rng.standard_normal(size=(r, d)))
    if init == "pca":
        return timed_start("pca", lambda: pca_start(X, r, rng), verbose)
    if r > min(d, n_classes - 1):
        raise ValueError(
            f"init='lda' with n_components={r}: n_components cannot be larger than "
            f"min(n_features, n_classes - 1) = {min(d, n_classes - 1)}. Pass "
            f"n_components <= {min(d, n_classes - 1)}, or init='auto'."
        )
    return timed_start("lda", lambda: lda_start(X, codes, r), verbose)


class NeighborhoodComponentsAnalysis(MahalanobisMixin, BaseEstimator):
    """Neighbourhood Components Analysis: a linear map that makes soft 1-NN classify well.

    Maximises the expected number of correctly classified points under stochastic nearest
    neighbours in the projected space::

        f(A) = sum_i sum_{j in C_i} p_ij,
        p_ij = exp(-|A x_i - A x_j|^2) / sum_{k != i} exp(-|A x_i - A x_k|^2),  p_ii = 0,

    with ``C_i`` the points of i's class. A drop-in for scikit-learn's estimator of the same
    name (same parameters, defaults, attributes and verbose output); ``optimizer``,
    ``batch_size``, ``learning_rate`` and ``n_jobs`` are fastdr's extras.

    Parameters
    ----------
    n_components : int or None, default=None
        Rows r of the learned map A (the output dimension); None means n_features.
    init : {"auto", "pca", "lda", "identity", "random"} or ndarray of shape (r, d), \
default="auto"
        Starting map. ``"auto"`` picks ``"lda"`` when ``r <= min(d, n_classes - 1)``,
        else ``"pca"`` when ``r < min(d, n_samples)``, else ``"identity"`` (scikit-learn's
        rule). ``"pca"``: the first r principal axes (:class:`fastdr.decomposition.PCA`).
        ``"lda"``: the first r discriminant directions, scaled as scikit-learn's
        ``LinearDiscriminantAnalysis(solver="svd").scalings_``; it needs
        ``r <= min(d, n_classes - 1)``. ``"identity"``: the r x d identity. ``"random"``:
        standard normal entries drawn from ``random_state_``. An array is the start itself.
    warm_start : bool, default=False
        If True and ``fit`` has run before, start from the previous ``components_``
        (``n_components`` and ``init`` are then ignored).
    max_iter : int, default=50
        Iterations of L-BFGS, or epochs (passes over the data) of SGD.
    tol : float, default=1e-5
        L-BFGS: the ``tol`` of :func:`scipy.optimize.minimize` (relative objective decrease
        and projected gradient). SGD: stop when an epoch changes the (running) objective by
        less than ``tol`` relative.
    callback : callable or None, default=None
        Called after every iteration (L-BFGS) or epoch (SGD) as
        ``callback(transformation, n_iter)``: the current map flattened to shape (r * d,)
        (a copy) and the 1-based iteration count, as scikit-learn calls it.
    verbose : int, default=0
        0 prints nothing. 1 or more prints, as scikit-learn does, a ``Finding ...
        components... done in`` line for the PCA/LDA start, a header, one
        ``[NeighborhoodComponentsAnalysis] iteration objective time`` line per objective
        evaluation (L-BFGS) or epoch (SGD), the ConvergenceWarning when the optimiser stops
        short, and ``Training took ...s.``; runs expected to last longer than ten seconds also get
        a progress bar on stderr.
    random_state : int, RandomState, Generator or None, default=None
        Seeds ``init="random"``, the PCA start and the SGD batch order.
    optimizer : {"lbfgs", "sgd"}, default="lbfgs"
        ``"lbfgs"``: scipy's L-BFGS-B on ``-f``, objective and gradient from one kernel
        call (scikit-learn's optimiser). ``"sgd"``: mini-batch stochastic gradient ascent,
        each row's softmax over all points, the batch's gradient averaged per row.
    batch_size : int or None, default=None
        SGD mini-batch size; None means ``min(n_samples, 256)``.
    learning_rate : float or None, default=None
        SGD step size on the per-row mean gradient. None picks it from the first batch so
        that the first step changes A by 5% (Frobenius norm); the rate is halved after an
        epoch whose running objective decreased.
    n_jobs : int or None, default=None
        Threads of the kernel (None: all cores). Results do not depend on it.

    Attributes
    ----------
    components_ : ndarray of shape (r, n_features)
        The learned map A (float64); the metric is ``M = A^T A``.
    n_iter_ : int
        Iterations (L-BFGS) or epochs (SGD) run. scikit-learn's count is one more (it also
        counts its first objective evaluation).
    random_state_ : numpy.random.RandomState or Generator
        The generator made from ``random_state`` at ``fit``.
    objective_ : float
        ``f(A)`` at the returned map (expected number of correctly classified points).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Column names of X at ``fit``; only when they are all strings.
    classes_ : ndarray of shape (n_classes,)

    Warns
    -----
    ConvergenceWarning
        With ``verbose >= 1``, when the optimiser stops before converging (scikit-learn
        warns only then too).

    Notes
    -----
    One objective-and-gradient evaluation costs O(m^2 r + n_c d + m d^2) time, with n_c
    <= m^2 the pairs whose softmax term is above round-off, and O(block x m + m (r + d))
    memory: the kernel walks blocks of rows, computes their projected distances by the
    norm trick (one GEMM), keeps per row the points within ``min_j d_ij + 42`` (each of the
    rest has ``p_ij < 6e-19`` of the row's largest term, below the round-off of its sum;
    all together at most ``m 6e-19`` of it), takes
    the log-sum-exp-stabilised softmax over them, and accumulates the gradient
    ``-2 A X^T (diag(rowsum W + colsum W) - W - W^T) X`` with
    ``w_ij = ([j in C_i] - p_i) p_ij`` from ``X_blk^T (W_blk X)``, formed from the sparse
    rows of W. No m x m (or m x m x d) array is ever built, so m = 50,000 fits in a few
    hundred MB.
    """

    def __init__(self, n_components=None, *, init="auto", warm_start=False, max_iter=50,
                 tol=1e-5, callback=None, verbose=0, random_state=None, optimizer="lbfgs",
                 batch_size=None, learning_rate=None, n_jobs=None):
        self.n_components = n_components
        self.init = init
        self.warm_start = warm_start
        self.max_iter = max_iter
        self.tol = tol
        self.callback = callback
        self.verbose = verbose
        self.random_state = random_state
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Learn the map from labelled data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        self
        """
        self._check_params()
        record_feature_names(self, X)
        X, classes, codes = check_labelled_data(X, y, type(self).__name__, min_classes=1)
        m, d = X.shape
        if self.n_components is not None and self.n_components > d:
            raise ValueError(
                f"The preferred dimensionality of the projected space `n_components` "
                f"({self.n_components}) cannot be greater than the given data dimensionality "
                f"({d})! Pass n_components <= {d}."
            )
        previous = getattr(self, "components_", None) if self.warm_start else None
        if previous is not None and previous.shape[1] != d:
            raise ValueError(
                f"The new inputs dimensionality ({d}) does not match the input dimensionality "
                f"of the previously learned transformation ({previous.shape[1]}). Fit on X "
                f"with {previous.shape[1]} features, or set warm_start=False."
            )
        if not isinstance(self.init, str):
            check_init_array(self.init, d, self.n_components)
        self.random_state_ = check_random_state(self.random_state)
        started = time.time()
        X64 = np.ascontiguousarray(X, dtype=np.float64)
        codes = np.ascontiguousarray(codes, dtype=np.int64)
        r = d if self.n_components is None else self.n_components
        if previous is not None:
            A0 = np.array(previous, dtype=np.float64, order="C")
        else:
            A0 = initial_components(X64, codes, r, init=self.init,
                                    n_components=self.n_components, rng=self.random_state_,
                                    verbose=self.verbose)
        # the objective does not depend on the order of the points; grouped by class, the
        # softmax candidates of a block of rows sit close together in memory (bench: nca)
        order = np.argsort(codes, kind="stable")
        X64 = np.ascontiguousarray(X64[order])
        codes = np.ascontiguousarray(codes[order])
        log = IterationLog(type(self).__name__, self.max_iter, self.verbose)
        # between kernel calls the optimiser only does O(r d) vector work; a multi-threaded
        # BLAS call there would leave OpenBLAS threads spinning into the next kernel call,
        # competing with its threads, so keep it on one
        with single_threaded_blas():
            if self.optimizer == "lbfgs":
                A, n_iter, objective, converged, message = self._fit_lbfgs(X64, codes, A0, log)
            else:
                A, n_iter, objective, converged, message = self._fit_sgd(
                    X64, codes, A0, self.random_state_, log)
        if self.verbose and not converged:
            # scikit-learn warns only when verbose: its default max_iter=50 often stops short
            warnings.warn(
                f"[{type(self).__name__}] NCA did not converge: {message}. Increase max_iter, "
                f"or loosen tol.",
                compatible(ConvergenceWarning),
                stacklevel=2,
            )
        log.close(f"Training took {time.time() - started:8.2f}s.")
        self.components_ = A
        self.n_iter_ = int(n_iter)
        self.objective_ = float(objective)
        self.classes_ = classes
        self.n_features_in_ = d
        return self

    # -- parameters and initialisation ------------------------------------------------------

    _parameter_constraints = {
        **LEARNER_CONSTRAINTS,
        "init": [StrOptions(INITS), "array-like"],
        "warm_start": ["boolean"],
        "optimizer": [StrOptions(OPTIMIZERS)],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        "learning_rate": [Interval(Real, 0, None, closed="neither"), None],
        "callback": [callable, None],
    }

    def _check_params(self):
        validate_params(self)

    def _fastdr_tags(self):
        # fit needs the labels, as scikit-learn's NCA declares in its tags
        return {"target_tags.required": True}

    # -- optimisers -------------------------------------------------------------------------

    def _start_log(self, log):
        if self.verbose:
            print(f"[{type(self).__name__}]")
        log.header()

    def _report(self, A, n_iter):
        if self.callback is not None:
            self.callback(A.ravel().copy(), n_iter)

    def _fit_lbfgs(self, X, codes, A0, log):
        r, d = A0.shape
        state = {"n_iter": 0}
        self._start_log(log)

        def negative_objective(a_flat):
            objective, gradient = nca_objective_gradient(X, a_flat.reshape(r, d), codes,
                                                         n_jobs=self.n_jobs)
            # one line per evaluation, numbered by the iteration it belongs to (sklearn's)
            log.iteration(state["n_iter"] + 1, objective)
            return -objective, -gradient.ravel()

        def on_iteration(intermediate_result):
            state["n_iter"] += 1
            self._report(intermediate_result.x, state["n_iter"])

        result = scipy.optimize.minimize(
            negative_objective, A0.ravel(), method="L-BFGS-B", jac=True, tol=self.tol,
            options={"maxiter": self.max_iter}, callback=on_iteration,
        )
        A = np.ascontiguousarray(result.x.reshape(r, d))
        return A, result.nit, -float(result.fun), bool(result.success), str(result.message)

    def _fit_sgd(self, X, codes, A0, rng, log):
        m = X.shape[0]
        batch = min(m, self.batch_size or 256)
        rate = self.learning_rate
        A = A0.copy()
        previous = None
        converged = False
        n_iter = 0
        self._start_log(log)
        for epoch in range(self.max_iter):
            order = rng.permutation(m).astype(np.int64)
            running = 0.0
            for start in range(0, m, batch):
                rows = np.ascontiguousarray(order[start:start + batch])
                objective, gradient = nca_objective_gradient(X, A, codes, rows,
                                                             n_jobs=self.n_jobs)
                running += objective
                step = gradient / rows.shape[0]
                if rate is None:
                    step_norm = np.linalg.norm(step)
                    rate = 0.05 * np.linalg.norm(A) / step_norm if step_norm > 0 else 1.0
                A += rate * step
            n_iter = epoch + 1
            log.iteration(n_iter, running)
            self._report(A, n_iter)
            if previous is not None:
                if abs(running - previous) <= self.tol * max(abs(previous), 1.0):
                    converged = True
                    break
                if running < previous:
                    rate *= 0.5
            previous = running
        objective, _ = nca_objective_gradient(X, A, codes, n_jobs=self.n_jobs)
        message = "the running objective still changed by more than tol per epoch"
        return A, n_iter, objective, converged, message
