"""Nystrom kernel PCA (``KernelPCA(n_landmarks=L)``): kernel PCA without the m x m kernel.

L landmark samples Z give every sample the feature vector ``phi(x) = W^T k(Z, x)``, with
``W = K_ZZ^(-1/2)`` (over the eigenvalues of ``K_ZZ`` above ``RANK_CUTOFF`` of the
largest), whose inner products are the Nystrom approximation of the kernel,
``k(x, y) ~ k(x, Z) K_ZZ^+ k(Z, y)`` (Williams and Seeger, 2001). Kernel PCA of that kernel
is PCA of the features, centred by their mean over all m samples as the exact method centres
the kernel: one pass over row blocks of the m x L cross-kernel accumulates the kernel rows'
sum and their centred L x L second moment (each block is dropped after use), from which the
features' scatter follows; the eigenproblem is L x L, and a second pass projects the
training samples. ``transform`` streams new samples the same way. Time O(m L (d + L)),
memory O(L^2 + block L + m k) beyond X; with L = m it is the exact method, but for the
directions in which K_ZZ falls below the cut-off.
"""

import numpy as np

from .._eigen.values import column_signs, n_components_for_ratio
from .._validation.budget import check_dense_allocation
from ._kernel_pca_inverse import fit_preimage
from ._kernel_pca_spectrum import clean_spectrum

# eigenvalues of K_zz below this share of the largest are dropped from W = K_zz^(-1/2): W
# amplifies the round-off of the accumulated second moment by up to 1 / (RANK_CUTOFF top),
# so the scatter's round-off stays near eps / RANK_CUTOFF = 1e-8 of its largest eigenvalue;
# the kernel's approximation loses at most that share of K_zz along the dropped directions
RANK_CUTOFF = 1e-8
# rows per block of the m x L cross-kernel: about 128 MB of float64 at any L (taller blocks
# run the symmetric product closer to the BLAS's peak; bench/DECISIONS.md)
_BLOCK_BYTES = 128 * 2**20


def choose_landmarks(X, n_landmarks, method, rng):
    """Sorted indices of the landmark samples: uniformly at random without replacement, or
    by k-means++ seeding on X (scikit-learn's ``kmeans_plusplus``), which spreads them over
    the data."""
    m = X.shape[0]
    if method == "kmeans++":
        from sklearn.cluster import kmeans_plusplus

        _, indices = kmeans_plusplus(X, n_landmarks, random_state=rng)
        return np.sort(indices)
    return np.sort(rng.choice(m, size=n_landmarks, replace=False))


def fit_nystrom(estimator, X, n_components, rng, log):
    """Fit ``estimator`` (a KernelPCA) on X through ``n_landmarks`` landmarks.

    Sets ``landmark_indices_``, ``landmarks_``, ``eigenvalues_``, ``eigenvectors_``
    (m x k, as the exact method's), ``n_components_``, and the projection used by
    :func:`transform_nystrom`; with ``fit_inverse_transform`` the pre-image regression is
    fitted on the landmarks' embeddings.
    """
    m = X.shape[0]
    n_landmarks = min(int(estimator.n_landmarks), m)
    check_dense_allocation((n_landmarks, n_landmarks), np.float64,
                           what=f"The {n_landmarks} x {n_landmarks} landmark kernel",
                           alternative="Pass a smaller n_landmarks.")
    indices = choose_landmarks(X, n_landmarks, estimator.landmark_method, rng)
    landmarks = X[indices]
    landmarks = landmarks.copy() if not hasattr(landmarks, "tocsr") else landmarks.tocsr()
    K_zz = np.asarray(estimator._kernel(landmarks, landmarks), dtype=np.float64)
    feature_map = _inverse_root(K_zz, estimator._nonfinite_remedy())
    log.done(f"{n_landmarks} landmarks and their kernel ({estimator.landmark_method})")
    # the features' scatter is W^T (sum_i (k_i - kbar)(k_i - kbar)^T) W. The kernel rows
    # are shifted by a provisional centre (the first block's mean row) before their second
    # moment is accumulated: rbf rows are all positive, and sum k k^T - m kbar kbar^T would
    # cancel most digits, which W (up to 1 / sqrt(RANK_CUTOFF top)) then amplifies. The
    # symmetric products of the blocks cost half a GEMM each; W is applied once at the end.
    second = np.zeros((n_landmarks, n_landmarks))
    total = np.zeros(n_landmarks)
    centre = None
    for K in _kernel_blocks(estimator, X, landmarks):
        if centre is None:
            centre = K.mean(axis=0)
        K -= centre
        total += K.sum(axis=0)
        second += K.T @ K
    if not np.isfinite(total).all():  # a NaN or inf kernel value reaches its column's sum
        raise ValueError("The kernel between the samples and the landmarks has non-finite "
                         f"values. {estimator._nonfinite_remedy()}")
    shift = total / m
    second -= m * np.outer(shift, shift)
    scatter = feature_map.T @ second @ feature_map
    mean = (centre + shift) @ feature_map
    log.done(f"scatter of the features ({m} x {n_landmarks} kernel, by row blocks)")
    values, vectors = np.linalg.eigh(0.5 * (scatter + scatter.T))
    values, vectors = values[::-1], vectors[:, ::-1]
    r = feature_map.shape[1]  # the numerical rank of K_zz: the features' dimension
    if isinstance(n_components, float):  # fastdr's t: the textbook's variance rule
        k = n_components_for_ratio(np.maximum(values, 0.0), n_components)
    else:
        k = r if n_components is None else int(n_components)
    if k > r:  # beyond the features' dimension the eigenvalues are 0, as past K's rank
        values = np.concatenate([values, np.zeros(k - r)])
        vectors = np.hstack([vectors, np.zeros((r, k - r))])
    values, vectors = values[:k], vectors[:, :k]
    values, vectors = clean_spectrum(
        values, vectors, double=X.dtype == np.float64,
        drop_zero=estimator.remove_zero_eig or n_components is None)
    projection = feature_map @ vectors  # L x k: k(Z, x) -> centred-feature coordinates
    offset = mean @ vectors
    embedding = np.vstack([block for block in _project_blocks(
        estimator, X, landmarks, projection, offset)]) if k else np.zeros((m, 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(values > 0, 1.0 / np.sqrt(values), 0.0)
    eigenvectors = embedding * scale
    signs = column_signs(eigenvectors)
    eigenvectors *= signs
    projection *= signs
    offset *= signs
    log.done("projection of the training samples")
    dtype = X.dtype
    estimator.landmark_indices_ = indices
    estimator.landmarks_ = landmarks
    estimator.eigenvalues_ = values.astype(dtype)
    estimator.eigenvectors_ = np.ascontiguousarray(eigenvectors, dtype=dtype)
    estimator.n_components_ = int(values.shape[0])
    estimator._nystrom = (projection, offset)
    if estimator.fit_inverse_transform:
        # the pre-image regression on the landmarks' embeddings (L x L, not m x m)
        landmark_embedding = (embedding[indices] * signs).astype(dtype)
        dense_landmarks = landmarks.toarray() if hasattr(landmarks, "toarray") else landmarks
        estimator.dual_coef_ = fit_preimage(estimator, landmark_embedding, dense_landmarks)
        estimator.X_transformed_fit_ = landmark_embedding
        log.done("pre-image regression on the landmarks")
    return estimator


def transform_nystrom(estimator, X):
    """The embedding of new samples X (validated), by row blocks of ``k(X, Z)``."""
    projection, offset = estimator._nystrom
    blocks = list(_project_blocks(estimator, X, estimator.landmarks_, projection, offset))
    out = np.vstack(blocks) if blocks else np.zeros((0, projection.shape[1]))
    return out.astype(X.dtype, copy=False)


def _inverse_root(K_zz, remedy):
    """``K_zz^(-1/2)`` over its eigenvalues above ``RANK_CUTOFF`` times the largest, as
    L x r columns."""
    if not np.isfinite(K_zz).all():
        raise ValueError(f"The landmark kernel has non-finite values. {remedy}")
    values, vectors = np.linalg.eigh(0.5 * (K_zz + K_zz.T))
    top = values[-1] if values.size else 0.0
    if top <= 0:
        raise ValueError(
            "The kernel of the landmarks has no positive eigenvalue, so the Nystrom "
            "features are empty: the kernel is not positive semi-definite on this data, or "
            "the landmarks are all alike. Use a positive semi-definite kernel, or more "
            "landmarks."
        )
    keep = values > top * RANK_CUTOFF
    return vectors[:, keep] / np.sqrt(values[keep])


def _rows_per_block(n_landmarks):
    return max(256, _BLOCK_BYTES // (8 * max(n_landmarks, 1)))


def _kernel_blocks(estimator, X, landmarks):
    """``k(X_block, Z)`` of each row block of X, float64 (block x L), written into one
    buffer reused for every block (a fresh 128 MB array per block costs its page faults
    again); a block is overwritten when the next is asked for. Its finiteness is checked by
    the caller on what it accumulates (a NaN or inf entry reaches it)."""
    rows = min(_rows_per_block(landmarks.shape[0]), X.shape[0])
    dtype = np.result_type(X.dtype, landmarks.dtype)
    buffer = np.empty((rows, landmarks.shape[0]), dtype=dtype)
    for start in range(0, X.shape[0], rows):
        stop = min(start + rows, X.shape[0])
        K = estimator._kernel(X[start:stop], landmarks, out=buffer[:stop - start])
        yield np.asarray(K, dtype=np.float64)


def _project_blocks(estimator, X, landmarks, projection, offset):
    """Centred feature coordinates of each row block of X: ``k(x, Z) P - offset``."""
    remedy = estimator._nonfinite_remedy()
    for K in _kernel_blocks(estimator, X, landmarks):
        out = K @ projection - offset
        if not np.isfinite(out).all():
            raise ValueError(f"The kernel between the samples and the landmarks has "
                             f"non-finite values. {remedy}")
        yield out
