"""Shortest-path and graph-assembly kernels against SciPy and the naive references."""

import numpy as np
import pytest
import scipy.sparse
from scipy.sparse.csgraph import connected_components, shortest_path

from fastdr._config import FLOYD_MIN_DENSITY
from fastdr._kernels.graph import shortest_paths as gk
from fastdr._kernels.graph.build import (
    geodesic_through_neighbours,
    permute_csr,
    row_medians,
    symmetrize_csr,
)
from fastdr._kernels.spectral.mds_restore import restore_distances_inplace
from fastdr.manifold._geodesic import (
    choose_path_method,
    geodesic_distances,
    landmark_columns,
    locality_order,
    maxmin_columns,
    renumber,
    undirected,
)
from fastdr.manifold._mds_core import embed_from_distances

from .. import reference


def random_graph(rng, m, density, *, zeros=0, blocks=1):
    """A random directed sparse graph; ``blocks`` > 1 makes it block-diagonal (disconnected)."""
    parts = []
    for b in range(blocks):
        n = m // blocks + (1 if b < m % blocks else 0)
        G = scipy.sparse.random(n, n, density=density, random_state=rng, format="coo")
        G.data = rng.uniform(0.1, 3.0, G.nnz)
        parts.append(G)
    G = scipy.sparse.block_diag(parts, format="csr")
    G.data[:zeros] = 0.0  # explicit zero-length edges stay edges
    return G


def graph_arrays(G):
    sym = undirected(G.indptr, G.indices, G.data, take_max=False)
    return sym.indptr, sym.indices, sym.weights


def heap_buffers(m):
    return (np.empty(m), np.empty(m, np.int32), np.empty(m), np.empty(m, np.int32))


CASES = [  # (m, density, blocks): connected and disconnected
    (50, 0.08, 1), (200, 0.02, 1), (200, 0.03, 3), (120, 0.3, 2), (150, 0.004, 1),
]


@pytest.mark.parametrize("m,density,blocks", CASES)
@pytest.mark.parametrize("method", ["dijkstra", "floyd", "auto"])
def test_geodesic_distances_equal_scipy(rng, m, density, blocks, method):
    G = random_graph(rng, m, density, zeros=3, blocks=blocks)
    ref = shortest_path(G, directed=False)
    D = geodesic_distances(G, method=method)
    assert D.dtype == np.float64 and D.shape == (m, m)
    np.testing.assert_array_equal(np.isinf(D), np.isinf(ref))
    finite = np.isfinite(ref)
    np.testing.assert_allclose(D[finite], ref[finite], rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(D, D.T)
    if blocks > 1:
        assert np.isinf(D).any()


@pytest.mark.jit_only  # interpreted (coverage pass) it takes most of a minute or more
def test_float32_output_and_n_jobs(rng):
    G = random_graph(rng, 300, 0.02, blocks=2)
    ref = shortest_path(G, directed=False)
    for method in ("dijkstra", "floyd"):
        D1 = geodesic_distances(G, method=method, n_jobs=1)
        D2 = geodesic_distances(G, method=method, n_jobs=2)
        np.testing.assert_array_equal(D1, D2)
        D32 = geodesic_distances(G, method=method, dtype=np.float32)
        assert D32.dtype == np.float32
        np.testing.assert_array_equal(np.isinf(D32), np.isinf(ref))
        finite = np.isfinite(ref)
        np.testing.assert_allclose(D32[finite], ref[finite], rtol=1e-5)


def test_dijkstra_row_against_heapq_reference(rng):
    G = random_graph(rng, 60, 0.06, zeros=2, blocks=2)
    indptr, indices, weights = graph_arrays(G)
    W = reference.sparse_to_dense_weights(G)
    dist = np.empty(60)
    for source in (0, 17, 59):
        reached = gk.dijkstra_row(indptr, indices, weights, source, dist, *heap_buffers(60)[1:])
        want = reference.dijkstra_dense(W, source)
        np.testing.assert_allclose(dist, want, rtol=1e-12)
        assert reached == np.isfinite(want).sum()


def test_dijkstra_row_first_target_stops_early_with_exact_targets(rng):
    G = random_graph(rng, 150, 0.03)
    indptr, indices, weights = graph_arrays(G)
    full = np.empty(150)
    part = np.empty(150)
    buffers = heap_buffers(150)[1:]
    gk.dijkstra_row(indptr, indices, weights, 10, full, *buffers)
    settled = gk.dijkstra_row(indptr, indices, weights, 10, part, *buffers, 140)
    np.testing.assert_array_equal(part[140:], full[140:])
    assert settled <= 150
    assert (part >= full).all()  # the rest are upper bounds


def test_floyd_kernel_against_textbook_reference(rng):
    G = random_graph(rng, 90, 0.05, zeros=2, blocks=2)
    indptr, indices, weights = graph_arrays(G)
    for tile in (7, 32, 128):
        D = np.empty((90, 90))
        gk.dense_from_csr(indptr, indices, weights, D)
        gk.floyd_warshall_inplace(D, tile)
        np.testing.assert_allclose(D, reference.floyd_dense(reference.sparse_to_dense_weights(G)),
                                   rtol=1e-12)


def test_rows_and_columns_from_sources(rng):
    G = random_graph(rng, 250, 0.015, blocks=2)
    indptr, indices, weights = graph_arrays(G)
    sources = np.array([3, 200, 3, 77, 249])
    ref = shortest_path(G, directed=False, indices=sources)
    rows = geodesic_distances(G, method="dijkstra", dtype=np.float32, n_jobs=2)[sources]
    np.testing.assert_allclose(rows, ref, rtol=1e-6)
    sym = undirected(G.indptr, G.indices, G.data, take_max=False)
    columns = landmark_columns(sym, sources, dtype=np.float64, n_jobs=2)
    np.testing.assert_allclose(columns, ref.T, rtol=1e-12)


def test_maxmin_landmarks_match_naive_greedy(rng):
    G = random_graph(rng, 180, 0.03)
    assert connected_components(G, directed=False)[0] == 1
    sym = undirected(G.indptr, G.indices, G.data, take_max=False)
    columns, sources = maxmin_columns(sym, 11, 5, dtype=np.float64)
    want = reference.maxmin_landmarks(G, 5, 11)
    np.testing.assert_array_equal(sources, want)
    assert len(set(sources.tolist())) == 11
    np.testing.assert_allclose(columns, shortest_path(G, directed=False, indices=want).T,
                               rtol=1e-12)


def test_symmetrize_keeps_explicit_zeros_and_combines(rng):
    G = random_graph(rng, 80, 0.05, zeros=4)
    G.setdiag(1.0)  # self-loops are dropped
    G = G.tocsr()
    for take_max, combine in ((True, np.maximum), (False, np.minimum)):
        indptr, indices, weights = symmetrize_csr(G.indptr.astype(np.int64),
                                                  G.indices.astype(np.int64), G.data, take_max)
        S = scipy.sparse.csr_matrix((weights, indices, indptr), shape=G.shape)
        W = reference.sparse_to_dense_weights(G)
        np.fill_diagonal(W, np.inf)
        both = np.isfinite(W) & np.isfinite(W.T)
        want = np.where(both, combine(W, W.T), np.fmin(W, W.T))
        got = np.full(G.shape, np.inf)
        coo = S.tocoo()
        got[coo.row, coo.col] = coo.data
        np.testing.assert_array_equal(got, want)
        assert (np.diff(indices[indptr[0]:indptr[1]]) > 0).all()
        assert (weights == 0).sum() >= 4


def test_permute_csr_round_trip(rng):
    G = random_graph(rng, 70, 0.06)
    sym = undirected(G.indptr, G.indices, G.data, take_max=True)
    order, rank = locality_order(sym)
    assert sorted(order.tolist()) == list(range(70))
    local = renumber(sym, order, rank)
    dense = sym.to_scipy().toarray()
    np.testing.assert_array_equal(local.to_scipy().toarray(), dense[order][:, order])
    back = permute_csr(local.indptr, local.indices, local.weights, rank, order)
    B = scipy.sparse.csr_matrix((back[2], back[1], back[0]), shape=(70, 70)).toarray()
    np.testing.assert_array_equal(B, dense)


def test_row_medians(rng):
    counts = np.array([0, 1, 2, 5, 6])
    indptr = np.r_[0, np.cumsum(counts)]
    values = rng.standard_normal(indptr[-1])
    got = row_medians(indptr, values)
    assert np.isnan(got[0])
    for i in range(1, 5):
        assert got[i] == np.median(values[indptr[i]:indptr[i + 1]])


def test_geodesic_through_neighbours_against_numpy(rng):
    geodesic = rng.uniform(0, 5, (30, 12))
    row_of = rng.permutation(30)
    nbr = rng.integers(0, 30, (7, 4))
    nbr[2, 1] = -1  # padding
    nbr_dist = rng.uniform(0, 1, (7, 4))
    out = np.empty((7, 12))
    geodesic_through_neighbours(nbr, nbr_dist, geodesic, row_of, out)
    for q in range(7):
        valid = nbr[q] >= 0
        cand = nbr_dist[q, valid, None] + geodesic[row_of[nbr[q, valid]]]
        np.testing.assert_array_equal(out[q], cand.min(axis=0) ** 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_restore_after_in_place_centring(rng, dtype):
    X = rng.standard_normal((130, 3))
    D = np.sqrt(reference.sq_euclidean(X, X)).astype(dtype)
    B = D.copy()
    _, _, _, sq_means = embed_from_distances(B, 2, eigen_solver="dense")
    J = np.eye(130) - 1 / 130
    want_frob = np.sum((-0.5 * J @ (D.astype(float) ** 2) @ J) ** 2)
    frob = restore_distances_inplace(B, sq_means, 16)
    np.testing.assert_allclose(frob, want_frob, rtol=1e-5 if dtype == np.float32 else 1e-10)
    tol = 1e-3 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(B, D, atol=tol * D.max())
    np.testing.assert_array_equal(B, B.T)
    assert (np.diag(B) == 0).all()


def test_choose_path_method_rule():
    assert choose_path_method(1000, 11_000) == "dijkstra"
    assert choose_path_method(100, int(FLOYD_MIN_DENSITY * 100**2) + 1) == "floyd"
    assert choose_path_method(100, int(FLOYD_MIN_DENSITY * 100**2)) == "dijkstra"


def test_geodesic_distances_bad_input():
    with pytest.raises(ValueError, match="graph has negative edge lengths"):
        geodesic_distances(scipy.sparse.csr_matrix(np.array([[0.0, -1.0], [0.0, 0.0]])))
    with pytest.raises(ValueError, match=r"graph must be square, got shape \(2, 3\)"):
        geodesic_distances(scipy.sparse.csr_matrix(np.ones((2, 3))))
    with pytest.raises(ValueError, match="path_method must be one of"):
        geodesic_distances(scipy.sparse.csr_matrix(np.ones((2, 2))), method="bellman")
