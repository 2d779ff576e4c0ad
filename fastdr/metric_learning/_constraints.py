"""Pair constraints: validating index pairs and labelled pairs, drawing pairs from classes."""

import numpy as np

from .._validation.arrays import check_array


def check_index_pairs(pairs, n_samples, name):
    """Validate an (n, 2) array of row indices into X; return ``(first, second)`` int64.

    Raises
    ------
    ValueError
        For an empty set, a wrong shape, non-integer entries, or an index outside
        ``[0, n_samples)``.
    """
    arr = np.asarray(pairs)
    if arr.size == 0:
        raise ValueError(
            f"{name} is empty: MMC needs at least one {name.replace('_', '-')} pair. Pass an "
            f"(n, 2) array of row indices with n >= 1."
        )
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(
            f"{name} must be an (n, 2) array of row-index pairs; got shape {arr.shape}."
        )
    if arr.dtype.kind not in "iu":
        raise ValueError(
            f"{name} must hold integer row indices; got dtype {arr.dtype}. Pass an int array."
        )
    low, high = int(arr.min()), int(arr.max())
    if low < 0 or high >= n_samples:
        bad = low if low < 0 else high
        raise ValueError(
            f"{name} holds the index {bad}, out of range for X with {n_samples} rows; "
            f"indices must lie in [0, {n_samples - 1}]."
        )
    arr = arr.astype(np.int64)
    return np.ascontiguousarray(arr[:, 0]), np.ascontiguousarray(arr[:, 1])


def check_pair_labels(y, n_pairs, kinds=("similar", "dissimilar")):
    """Pair labels as float64 +1 / -1, one per pair.

    Parameters
    ----------
    y : array-like of shape (n_pairs,) or None
    n_pairs : int
    kinds : tuple of two str
        What +1 and -1 are called in the messages.

    Returns
    -------
    ndarray of shape (n_pairs,), float64
    """
    plus, minus = kinds
    if y is None:
        raise ValueError(f"y is required with pairs: pass one label per pair, +1 for a {plus} "
                         f"pair and -1 for a {minus} pair.")
    labels = np.asarray(y)
    if labels.ndim != 1 or labels.shape[0] != n_pairs:
        raise ValueError(f"y must hold one label per pair: expected shape ({n_pairs},), got "
                         f"{labels.shape}.")
    if labels.dtype.kind not in "iuf" or not np.isin(labels, (1, -1)).all():
        found = np.unique(labels)[:5].tolist() if labels.dtype.kind in "iufb" else labels.dtype
        # metric-learn's message, word for word (its tests compare it by equality); fastdr's
        # remedy, naming what y holds, as a PEP 678 note (shown in the traceback)
        error = ValueError("When training on pairs, the labels (y) should contain only "
                           "values in [-1, 1]. Found an incorrect value.")
        error.add_note(f"y for pairs must hold only +1 ({plus}) and -1 ({minus}); got "
                       f"{found}. Map your labels to +1 / -1.")
        raise error
    return labels.astype(np.float64)


def labelled_pairs_to_indices(pairs, y):
    """Turn a (n, 2, d) array of pairs with labels +1 / -1 into X and index pairs.

    Returns
    -------
    X : ndarray of shape (2 n, d)
        The first points, then the second points.
    must_link, cannot_link : tuple of two int64 arrays
        ``(first, second)`` row indices into X.
    """
    P = check_array(pairs, name="pairs", ensure_2d=False)
    if P.ndim != 3 or P.shape[1] != 2 or P.shape[2] < 1:
        raise ValueError(
            f"pairs must have shape (n_pairs, 2, n_features); got shape {P.shape}. Pass a 2-D "
            "X with must_link / cannot_link index pairs instead, or stack the pairs."
        )
    labels = check_pair_labels(y, P.shape[0], kinds=("must-link", "cannot-link"))
    n = P.shape[0]
    X = np.ascontiguousarray(np.concatenate([P[:, 0], P[:, 1]], axis=0))
    index = np.arange(n, dtype=np.int64)
    positive = labels == 1
    links = []
    for mask, name in ((positive, "must-link"), (~positive, "cannot-link")):
        if not mask.any():
            label = "+1" if name == "must-link" else "-1"
            raise ValueError(
                f"No {name} pair: y has no {label} label. MMC needs at least one must-link "
                "(+1) and one cannot-link (-1) pair."
            )
        links.append((index[mask], index[mask] + n))
    return X, links[0], links[1]


def draw_class_pairs(codes, n_pairs, rng):
    """Draw must-link and cannot-link pairs uniformly from class labels, reproducibly.

    A must-link pair takes a uniform anchor among the points whose class has at least two
    members and a uniform partner from the rest of that class; a cannot-link pair takes a
    uniform anchor and a uniform partner from the other classes.

    Parameters
    ----------
    codes : ndarray of int64, shape (m,)
        Class code per row (at least two classes).
    n_pairs : int
        Pairs of each kind.
    rng : numpy RandomState or Generator

    Returns
    -------
    must_link, cannot_link : tuple of two int64 arrays
    """
    m = codes.shape[0]
    counts = np.bincount(codes)
    order = np.argsort(codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(m, dtype=np.int64)
    rank[order] = np.arange(m) - starts[codes[order]]

    eligible = np.flatnonzero(counts[codes] >= 2)
    if eligible.size == 0:
        raise ValueError(
            "No class has two or more samples, so no must-link pair can be drawn. Pass at "
            "least two samples of some class."
        )
    anchors = eligible[_integers(rng, 0, eligible.size, n_pairs)]
    cls = codes[anchors]
    offset = _integers(rng, 0, counts[cls] - 1, n_pairs)
    offset = offset + (offset >= rank[anchors])
    partners = order[starts[cls] + offset]
    must_link = (anchors.astype(np.int64), partners.astype(np.int64))

    anchors = _integers(rng, 0, m, n_pairs)
    cls = codes[anchors]
    position = _integers(rng, 0, m - counts[cls], n_pairs)
    position = position + counts[cls] * (position >= starts[cls])
    partners = order[position]
    cannot_link = (anchors.astype(np.int64), partners.astype(np.int64))
    return must_link, cannot_link


def supervised_pairs(y, n_samples, learner, kind, n_constraints, rng):
    """The pairs of a ``*_Supervised`` learner: y checked (:func:`supervised_codes`), then
    ``n_constraints`` must-link and as many cannot-link pairs drawn from its classes, rows
    with a negative label (unlabelled) never drawn.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or None
    n_samples : int
    learner, kind : str
        As in :func:`supervised_codes`.
    n_constraints : int or None
        Pairs of each kind; None is metric-learn's default, ``20 n^2`` with n the distinct
        values of y (an unlabelled value counts, as in metric-learn).
    rng : RandomState or Generator

    Returns
    -------
    classes : ndarray
    must_link, cannot_link : ndarray of shape (n_constraints, 2), int64
        Row indices.
    """
    classes, codes = supervised_codes(y, n_samples, learner, kind)
    n_pairs = n_constraints or 20 * np.unique(np.asarray(y)).size ** 2
    labelled = np.flatnonzero(codes >= 0)
    must, cannot = draw_class_pairs(codes[labelled], n_pairs, rng)
    return classes, labelled[np.column_stack(must)], labelled[np.column_stack(cannot)]


def stack_pairs(X, must_link, cannot_link):
    """The pairs of two (n, 2) index arrays as points, ``(n_must + n_cannot, 2, d)``, with
    their labels (+1 must-link first, then -1)."""
    index = np.concatenate([must_link, cannot_link])
    labels = np.concatenate([np.ones(must_link.shape[0]), -np.ones(cannot_link.shape[0])])
    return np.stack([X[index[:, 0]], X[index[:, 1]]], axis=1), labels


def supervised_codes(y, n_samples, learner, kind):
    """Class codes of a ``*_Supervised`` learner's labels, checked: one label per row, at
    least two labelled classes (a negative numeric label means unlabelled, as in
    metric-learn).

    Parameters
    ----------
    y : array-like of shape (n_samples,) or None
    n_samples : int
    learner : str
        The learner's name, for the messages.
    kind : str
        What the second class is needed for ("cannot-link", "dissimilar").

    Returns
    -------
    classes : ndarray
    codes : ndarray of int64
        Each row's index into ``classes``, -1 for an unlabelled row.
    """
    if y is None:
        raise ValueError(f"{learner} requires y to be passed, but the target y is None.")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"y must hold one label per row of X: expected shape ({n_samples},), "
                         f"got {y.shape}.")
    classes, codes = partial_label_codes(y)
    if classes.shape[0] < 2:
        has = (f"a single class ({classes[0]})" if classes.shape[0] else
               "no labelled class")
        raise ValueError(f"{learner} needs at least 2 classes to draw {kind} pairs; y has "
                         f"{has}. Pass labels of two or more classes (negative labels mean "
                         "unlabelled, as in metric-learn).")
    return classes, codes


def partial_label_codes(y):
    """Class codes where a negative numeric label means "unlabelled" (metric-learn's rule).

    Returns
    -------
    classes : ndarray
        The labelled classes, sorted.
    codes : ndarray of int64
        Each row's index into ``classes``, -1 for an unlabelled row.
    """
    from .._validation.arrays import check_classification_targets

    y = np.asarray(y)
    classes, codes = check_classification_targets(y, min_classes=1)
    codes = np.asarray(codes, dtype=np.int64)
    if y.dtype.kind in "iuf":
        unlabelled = classes < 0
        if unlabelled.any():
            remap = np.cumsum(~unlabelled) - 1
            remap[unlabelled] = -1
            codes, classes = remap[codes], classes[~unlabelled]
    return classes, codes


def _integers(rng, low, high, size):
    """Uniform integers in [low, high) (high may be an array) for RandomState or Generator."""
    high = np.asarray(high, dtype=np.int64)
    u = rng.random_sample(size) if hasattr(rng, "random_sample") else rng.random(size)
    span = high - low
    return low + np.minimum(np.floor(u * span).astype(np.int64), span - 1)
