"""The cosine distance and kernel do not depend on a row's scale, and neither may fastdr's:
at 1e-200 the squared norms underflowed (every row looked like a zero row, every distance
came back 1) and at 1e200 they overflowed. Also sparse weighted Minkowski, which was refused.
"""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.metrics as skm
import sklearn.neighbors as skn

import fastdr

X = np.random.default_rng(0).normal(size=(30, 4))
SCALES = [1e-200, 1e-30, 1e30, 1e200]


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("sparse", [False, True])
def test_cosine_distances_ignore_the_rows_scale(scale, sparse):
    want = skm.pairwise_distances(X, metric="cosine")
    Xs = X * scale
    Xs[3] *= 1e-5  # rows of different scales in one matrix
    Z = sp.csr_matrix(Xs) if sparse else Xs
    np.testing.assert_allclose(fastdr.pairwise_distances(Z, metric="cosine"), want,
                               atol=1e-12)
    dist, ind = fastdr.NearestNeighbors(n_neighbors=4, metric="cosine").fit(Z).kneighbors()
    ref_dist, ref_ind = skn.NearestNeighbors(n_neighbors=4, metric="cosine").fit(X).kneighbors()
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, atol=1e-12)


@pytest.mark.parametrize("scale", SCALES)
def test_cosine_nndescent_and_kernel_pca_ignore_the_rows_scale(scale):
    dist, ind = fastdr.nndescent_graph(X, 5, metric="cosine", random_state=0)
    dist_s, ind_s = fastdr.nndescent_graph(X * scale, 5, metric="cosine", random_state=0)
    np.testing.assert_array_equal(ind_s, ind)
    np.testing.assert_allclose(dist_s, dist, atol=1e-12)
    want = fastdr.KernelPCA(2, kernel="cosine").fit(X).eigenvalues_
    for Z in (X * scale, sp.csr_matrix(X * scale)):
        got = fastdr.KernelPCA(2, kernel="cosine").fit(Z).eigenvalues_
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_float32_rows_at_the_edge_of_their_range():
    X32 = X.astype(np.float32)
    want = fastdr.pairwise_distances(X32, metric="cosine")
    for scale in (np.float32(1e-30), np.float32(1e30)):
        np.testing.assert_allclose(fastdr.pairwise_distances(X32 * scale, metric="cosine"),
                                   want, atol=1e-6)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_sparse_weighted_minkowski_matches_scikit_learn(p):
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(40, 4))
    Z[Z < 0.3] = 0.0
    w = np.array([1.0, 2.0, 3.0, 0.5])
    params = {"p": p, "w": w}
    want = skm.pairwise_distances(Z, metric="minkowski", **params)
    got = fastdr.pairwise_distances(sp.csr_matrix(Z), metric="minkowski", metric_params=params)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    dist, _ = fastdr.NearestNeighbors(n_neighbors=4, p=p, metric_params={"w": w}).fit(
        sp.csr_matrix(Z)).kneighbors(sp.csr_matrix(Z[:7]))
    ref, _ = skn.NearestNeighbors(n_neighbors=4, p=p, metric_params={"w": w},
                                  algorithm="brute").fit(Z).kneighbors(Z[:7])
    np.testing.assert_allclose(dist, ref, rtol=1e-12)
    with pytest.raises(ValueError, match="3 weights, but the data have 4 features"):
        fastdr.NearestNeighbors(p=p, metric_params={"w": w[:3]}).fit(sp.csr_matrix(Z))
