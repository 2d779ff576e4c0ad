"""SCML's bases and triplets, as metric-learn 0.7 builds them: the "triplet_diffs" bases
(eigenvectors of the triplets' difference scatter), the "lda" bases (discriminant directions
of regions around k-means centres), and each point's genuine / impostor triplets."""

import warnings
from math import ceil

import numpy as np

from .._runtime.blas import single_threaded_blas
from ..neighbors._search import knn_brute

#: consecutive draws of triplets that add no basis before "triplet_diffs" gives up (metric-
#: learn loops forever when the triplets' differences cancel, e.g. identical points)
MAX_EMPTY_ROUNDS = 50

def triplet_diffs_basis(X, triplets, n_basis, rng):
    """metric-learn's "triplet_diffs" basis, eigenvectors taken as columns (it takes rows).

    Each round draws d triplets, forms ``S = sum dp dp^T - sum dn dn^T`` over their positive
    and negative differences and adds S's eigenvectors of nonzero eigenvalue (metric-learn's
    positive ones of ``S^T S``, by increasing ``|lambda|``), zero judged against ``d eps
    max|lambda|`` so that round-off adds no arbitrary null-space direction."""
    n, d = triplets.shape[0], X.shape[1]
    if d > n:
        # metric-learn's message (its tests compare it for equality)
        raise ValueError(
            f"Number of features ({d}) is greater than the number of triplets({n}).\n"
            "Consider using dimensionality reduction or using another basis generation "
            "scheme.")
    basis, filled, empty_rounds = np.zeros((n_basis, d)), 0, 0
    while filled < n_basis:
        pick = triplets[rng.choice(n, size=d, replace=False)]
        pos, neg = X[pick[:, 0]] - X[pick[:, 1]], X[pick[:, 0]] - X[pick[:, 2]]
        values, vectors = np.linalg.eigh(pos.T @ pos - neg.T @ neg)
        size, order = np.abs(values), np.argsort(np.abs(values), kind="stable")
        order = order[size[order] > d * np.finfo(np.float64).eps * size.max()]
        new = vectors[:, order[:n_basis - filled]].T
        basis[filled:filled + new.shape[0]] = new
        filled += new.shape[0]
        empty_rounds = 0 if new.shape[0] else empty_rounds + 1
        if empty_rounds == MAX_EMPTY_ROUNDS:
            raise ValueError(
                f"The 'triplet_diffs' basis found only {filled} of n_basis={n_basis} bases: "
                f"{MAX_EMPTY_ROUNDS} draws of triplets in a row had differences that cancel "
                "(for instance identical points). Pass triplets of distinct points, a smaller "
                "n_basis, or a basis array.")
    return basis


def lda_directions(Xl, class_sizes, tol=1e-4):
    """The unit discriminant directions (rank, d) of one region, rows grouped by class:
    scikit-learn 1.7's "svd" LDA ``scalings_``, normalised, as metric-learn 0.7 takes them.
    The rank may fall below n_classes - 1 (metric-learn then crashes)."""
    from scipy.linalg import svd

    n, c = Xl.shape[0], class_sizes.shape[0]
    if n == c:  # one point per class: no within-class scatter, no direction
        return np.zeros((0, Xl.shape[1]))
    means = np.add.reduceat(Xl, np.cumsum(class_sizes) - class_sizes) / class_sizes[:, None]
    Xc = Xl - np.repeat(means, class_sizes, axis=0)
    std = np.std(Xc, axis=0)
    std[std == 0] = 1.0  # scikit-learn's guard
    _, S, Vt = svd(np.sqrt(1.0 / (n - c)) * (Xc / std), full_matrices=False)
    rank, priors = int(np.sum(S > tol)), class_sizes / n
    scalings = (Vt[:rank] / std).T / S[:rank]
    Xb = (np.sqrt(n * priors / (c - 1)) * (means - priors @ means).T).T @ scalings
    if min(Xb.shape) == 0:  # no within-class direction: none between classes either
        return np.zeros((0, Xl.shape[1]))
    _, S, Vt = svd(Xb, full_matrices=False)
    directions = (scalings @ Vt.T[:, :int(np.sum(S > tol * S[0]))]).T
    norms = np.sqrt(np.einsum("ij,ij->i", directions, directions))
    norms[norms == 0] = 1.0
    return directions / norms[:, None]


def lda_basis(X, codes, n_basis, rng, n_jobs):
    """metric-learn's "lda" basis: scikit-learn's k-means places ceil(n_basis / (2 e)) centres
    (e = min(n_classes - 1, d)); the k nearest points of every class to a centre (k = 10 and
    20, or 20 and 50 above 50 features) form a region whose LDA gives up to e directions, in
    metric-learn's slots. A region of lower rank leaves slots zero (metric-learn crashes)."""
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    n_classes, d = int(codes.max()) + 1, X.shape[1]
    n_eig = min(n_classes - 1, d)
    n_clusters = ceil(n_basis / (2 * n_eig))  # two scales of n_eig directions per centre
    if not isinstance(rng, np.random.RandomState):  # scikit-learn takes no Generator
        rng = np.random.RandomState(rng.integers(2**32, dtype=np.uint64))
    # one OpenMP thread: scikit-learn merges its threads' centre sums in finishing order, so
    # the centres would vary from run to run; one BLAS thread: the SVDs are small
    with threadpool_limits(limits=1, user_api="openmp"), single_threaded_blas():
        centres = KMeans(n_clusters=n_clusters, n_init=10, random_state=rng,  # one centre:
                         algorithm="elkan" if n_clusters > 1 else "lloyd",  # sklearn's switch
                         ).fit(X).cluster_centers_
        scales = (20, 50) if d > 50 else (10, 20)
        sizes = np.bincount(codes, minlength=n_classes)
        members = [np.flatnonzero(codes == c) for c in range(n_classes)]
        nearest = [m[knn_brute(np.ascontiguousarray(X[m]), centres, int(min(m.size, scales[1])),
                               self_query=False, n_jobs=n_jobs)[1]] for m in members]
        basis, slot = np.zeros((n_basis, d)), 0
        for scale in scales:
            k_class = np.minimum(sizes, scale)
            for j in range(n_clusters):
                if slot >= n_basis:
                    break
                rows = np.concatenate([nearest[c][j, :k_class[c]] for c in range(n_classes)])
                new = lda_directions(X[rows], k_class)[:n_basis - slot]
                basis[slot:slot + new.shape[0]] = new
                slot += n_eig
    return basis


def knn_triplets(X, codes, k_genuine, k_impostor, n_jobs):
    """metric-learn's ``generate_knntriplets``: for each point a (by class, then row), every
    (a, g, i), g among its k_genuine nearest points of its class, i among its k_impostor
    nearest of the others (exact; ties by row), i varying fastest. A small class uses less."""
    n_classes = int(codes.max()) + 1
    sizes = np.bincount(codes, minlength=n_classes)
    k_gen, k_imp = np.minimum(k_genuine, sizes - 1), np.minimum(k_impostor, codes.size - sizes)
    for k, ks, name in ((k_genuine, k_gen, "k_genuine"), (k_impostor, k_imp, "k_impostor")):
        if (ks < k).any():
            short = np.flatnonzero(ks < k).tolist()
            warnings.warn(f"The classes (by sorted label position) {short} have too few points "
                          f"for {name}={k}; they use {ks[ks < k].tolist()} neighbours instead.",
                          stacklevel=4)
    blocks = []
    for c in range(n_classes):
        if k_gen[c] == 0:
            continue
        members, others = np.flatnonzero(codes == c), np.flatnonzero(codes != c)
        Xc = np.ascontiguousarray(X[members])
        genuine = members[knn_brute(Xc, Xc, int(k_gen[c]), self_query=True, n_jobs=n_jobs)[1]]
        impostors = others[knn_brute(np.ascontiguousarray(X[others]), Xc, int(k_imp[c]),
                                     self_query=False, n_jobs=n_jobs)[1]]
        parts = np.broadcast_arrays(members[:, None, None], genuine[:, :, None],
                                    impostors[:, None, :])
        blocks.append(np.stack([p.ravel() for p in parts], axis=1))
    if not blocks:  # every class is a singleton
        raise ValueError("No triplet can be formed: every class has a single labelled point. "
                         "Pass two or more points of some class.")
    return np.concatenate(blocks)
