"""Starting maps of NCA and LMNN: scikit-learn's ``init`` rule, its PCA and LDA starts, and
metric-learn's rules over them."""

import sys
import time

import numpy as np

from .._validation.arrays import check_array
from .._validation.params import check_random_state
from ..exceptions import InvalidParameterError, compatible


def check_init_array(init, n_features, n_components):
    """An ``init`` array, float64 of shape (r, n_features), checked in scikit-learn's order.

    Parameters
    ----------
    init : array-like of shape (r, d)
    n_features : int
        Columns of the training X.
    n_components : int or None
        The estimator's ``n_components``; when set, r must equal it.

    Returns
    -------
    ndarray of shape (r, n_features), float64, C-contiguous
    """
    A = check_array(init, name="init", dtype=np.float64)
    r, d = A.shape
    # scikit-learn's and metric-learn's sentences as the message (metric-learn's tests compare
    # it for equality), fastdr's remedy as a note (PEP 678: in the traceback, not in str)
    if d != n_features:
        _raise_with_note(
            f"The input dimensionality ({d}) of the given linear transformation `init` must "
            f"match the dimensionality of the given inputs `X` ({n_features}).",
            f"Pass an init of shape (n_components, {n_features}).")
    if r > d:
        _raise_with_note(
            f"The output dimensionality ({r}) of the given linear transformation `init` cannot "
            f"be greater than its input dimensionality ({d}).",
            f"Pass at most {d} rows.")
    if n_components is not None and n_components != r:
        _raise_with_note(
            f"The preferred dimensionality of the projected space `n_components` "
            f"({n_components}) does not match the output dimensionality of the given linear "
            f"transformation `init` ({r})!",
            f"Pass an init of shape ({n_components}, {d}) or n_components=None.")
    return np.array(A, dtype=np.float64, order="C")


def _raise_with_note(message, note):
    error = ValueError(message)
    error.add_note(note)
    raise error


def check_init_name(init, names, estimator):
    """Refuse an ``init`` that is neither one of ``names`` nor an ndarray, in metric-learn's
    words (its tests compare them for equality); fastdr's usual parameter message is the note.

    Parameters
    ----------
    init : object
    names : list of str
        The allowed names, in metric-learn's order.
    estimator : object
        The learner, for the note.

    Raises
    ------
    fastdr.exceptions.InvalidParameterError
    """
    if isinstance(init, np.ndarray) or (isinstance(init, str) and init in names):
        return
    listed = "', '".join(names)
    error = compatible(InvalidParameterError)(
        f"`init` must be '{listed}' or a numpy array of shape (n_components, n_features).")
    error.add_note(f"The 'init' parameter of {type(estimator).__name__} must be one of "
                   f"{names} or an ndarray. Got {init!r} instead.")
    raise error


def resolve_init(init, r, n_samples, n_features, n_classes):
    """scikit-learn's ``"auto"`` rule: lda if r <= min(d, k - 1), pca if r < min(d, m), else
    identity; any other name is returned as is."""
    if init != "auto":
        return init
    if r <= min(n_features, n_classes - 1):
        return "lda"
    if r < min(n_features, n_samples):
        return "pca"
    return "identity"


def timed_start(kind, compute, verbose):
    """Run ``compute()``; with ``verbose``, print scikit-learn's ``Finding ... done in`` line."""
    what = {"pca": "principal", "lda": "most discriminative"}[kind]
    started = time.time()
    if verbose:
        print(f"Finding {what} components... ", end="")
        sys.stdout.flush()
    A = compute()
    if verbose:
        print(f"done in {time.time() - started:5.2f}s")
    return A


def pca_start(X, r, random_state):
    """The first r principal axes of X (rows), from :class:`fastdr.decomposition.PCA`."""
    from ..decomposition import PCA

    pca = PCA(n_components=r, random_state=random_state).fit(X)
    return np.ascontiguousarray(pca.components_, dtype=np.float64)


def lda_start(X, codes, r, tol=1e-4, fallback=True):
    """The first r discriminant directions, scaled as scikit-learn's ``solver="svd"`` scales
    ``LinearDiscriminantAnalysis.scalings_`` (its default, which its NCA uses).

    The within-class deviations, each feature divided by its within-class standard deviation,
    are whitened by their SVD (directions with singular value <= ``tol`` dropped); the class
    means, weighted by ``sqrt(n_k / (k - 1))``, are then rotated onto their own singular
    directions. Row j of the result is the j-th discriminant direction in input space, with
    unit within-class variance (population normalisation). Falls back to the PCA start when
    no feature varies within the classes or the class means coincide.

    Parameters
    ----------
    X : ndarray of shape (m, d), float64
    codes : ndarray of shape (m,), int64
        Class codes 0 .. k-1.
    r : int
        Rows wanted (at most k - 1 are returned).
    tol : float
        scikit-learn's LDA rank threshold.
    fallback : bool
        Where there is no LDA start, return the PCA start (True) or None.

    Returns
    -------
    ndarray of shape (min(r, rank), d), or None

    Notes
    -----
    Time O(m d^2), memory O(m d): two thin SVDs, no d x d scatter is formed.
    """
    m, d = X.shape
    n_classes = int(codes.max()) + 1
    counts = np.bincount(codes, minlength=n_classes).astype(np.float64)
    means = np.zeros((n_classes, d))
    np.add.at(means, codes, X)
    means /= counts[:, None]
    deviations = X - means[codes]
    std = deviations.std(axis=0)
    std[std == 0] = 1.0
    _, S, Vt = np.linalg.svd(deviations / std / np.sqrt(m), full_matrices=False)
    rank = int(np.sum(S > tol))
    if rank == 0:
        return pca_start(X, r, None) if fallback else None
    whitening = (Vt[:rank] / std).T / S[:rank]
    priors = counts / m
    centre = priors @ means
    weights = np.sqrt(m * priors / max(n_classes - 1, 1))
    _, S, Vt = np.linalg.svd((weights[:, None] * (means - centre)) @ whitening,
                             full_matrices=False)
    if S[0] == 0:
        return pca_start(X, r, None) if fallback else None
    rank = int(np.sum(S > tol * S[0]))
    scalings = whitening @ Vt.T[:, :rank]
    return np.ascontiguousarray(scalings.T[:r], dtype=np.float64)


def metric_learn_start(init, X, codes, r, random_state, verbose):
    """The starting map of metric-learn's LMNN and NCA, by metric-learn's rules.

    Parameters
    ----------
    init : {"auto", "pca", "lda", "identity", "random"} or ndarray of shape (r, d)
    X : ndarray of shape (m, d)
    codes : ndarray of int64
        Class codes 0 .. n_classes - 1.
    r : int
        The resolved n_components.
    random_state : int, RandomState instance or None
        Seeds "random" (``randn``) and the "pca" start's solver.
    verbose : bool or int
        Print scikit-learn's ``Finding ... done in`` line for "pca" and "lda".

    Returns
    -------
    ndarray of shape (r, d)
    """
    m, d = X.shape
    if isinstance(init, np.ndarray):
        # metric-learn compares the rows with n_components resolved (None: n_features)
        return check_init_array(init, d, r)
    n_classes = int(codes.max()) + 1
    kind = resolve_init(init, r, m, d, n_classes)
    if kind == "identity":
        return np.eye(r, d)
    if kind == "random":
        rng = check_random_state(random_state)
        return np.asarray(rng.standard_normal((r, d)), dtype=np.float64)
    if kind == "pca":
        return timed_start("pca", lambda: pca_start(X, r, random_state), verbose)
    if r > min(d, n_classes - 1):
        # a zero row of L never moves (the gradient is L times a d x d matrix)
        raise ValueError(
            f"init='lda' gives at most min(n_features, n_classes - 1) = "
            f"{min(d, n_classes - 1)} components, and n_components={r}: lower "
            f"n_components or pass init='pca' or 'auto'.")
    L = timed_start("lda", lambda: lda_start(X, codes, r, fallback=False), verbose)
    if L is None:  # no spread within the classes, or the class means coincide
        return pca_start(X, r, random_state)
    # metric-learn 0.7 runs on scikit-learn before 1.8, whose LDA scalings_ are today's times
    # sqrt((m - n_classes) / m): its LDA start is that one
    L = L * np.sqrt((m - n_classes) / m)
    if L.shape[0] < r:  # the class means span fewer directions: no LDA start
        if init == "lda":
            raise ValueError(
                f"init='lda': the class means span {L.shape[0]} directions, fewer than "
                f"n_components={r}; lower n_components or pass init='pca'.")
        return pca_start(X, r, random_state)
    return L
