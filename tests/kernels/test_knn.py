"""Exact k-NN kernels: the certified float32 screen of float64 k-NN
(fastdr/_kernels/knn/screen.py) and the neighbour votes and means (fastdr/_kernels/knn/vote.py),
called directly and compared with the naive references of tests/reference.py."""

import numpy as np
import pytest

import fastdr
from fastdr._kernels.knn import screen as knn_screen
from fastdr._kernels.knn import vote
from fastdr._runtime.threads import parallel_section

from .. import reference


def _near_ties(seed=0, d=20, n_tied=40, n_far=200):
    """One query at the origin; ``n_tied`` targets whose squared distances are
    ``1 + j * 1e-11``: distinct in float64, all within the float32 rounding of each other
    (ranked by j, which is shuffled against the index); plus far targets."""
    rng = np.random.default_rng(seed)
    directions = rng.standard_normal((n_tied, d))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    radii = np.sqrt(1 + rng.permutation(n_tied) * 1e-11)
    far = rng.standard_normal((n_far, d)) * 3 + 10
    T = np.vstack([directions * radii[:, None], far])
    Q = np.zeros((1, d))
    return T, Q


def _screen(T, Q, k, n_candidates, margins=True):
    """Run the screening kernel alone, as ``_knn_screened`` sets it up."""
    m, d = Q.shape
    centre = T.mean(axis=0)
    with parallel_section(None):
        t_norms = ((T - centre) ** 2).sum(axis=1)
        q_norms = ((Q - centre) ** 2).sum(axis=1)
        scale = 2.0 ** -np.frexp(np.sqrt(max(t_norms.max(), q_norms.max())))[1]
        eps = knn_screen.screen_eps(d) if margins else 0.0
        margin_q = eps * q_norms * scale**2 + (knn_screen.screen_abs(d) if margins else 0)
        margin_t = 4 * eps * t_norms * scale**2
        t_packed = knn_screen.pack_screen_targets(T, centre, scale, t_norms, 2 * eps, 64)
        q_packed = knn_screen.pack_screen_queries(Q, centre, scale)
        out_d = np.zeros((m, k))
        out_i = np.zeros((m, k), dtype=np.int64)
        certified = np.zeros(m, dtype=bool)
        knn_screen.knn_screen(Q, T, q_packed, t_packed, k, n_candidates,
                              np.full(m, -1, dtype=np.int64), 16, margin_q, margin_t, out_d,
                              out_i, certified, np.zeros(m))
    return out_d, out_i, certified


def test_near_ties_within_float32_rounding_are_not_certified():
    T, Q = _near_ties()
    _, idx, certified = _screen(T, Q, k=10, n_candidates=15)
    assert not certified[0]
    # the test can fail: without the margins the same kernel certifies a wrong answer
    _, idx0, certified0 = _screen(T, Q, k=10, n_candidates=15, margins=False)
    _, ref_i = reference.knn(T, Q, 10)
    assert certified0[0] and not np.array_equal(idx0[0], ref_i[0])


def test_near_ties_give_the_float64_answer_through_the_estimator():
    T, Q = _near_ties()
    dist, idx = fastdr.NearestNeighbors(n_neighbors=10, algorithm="brute").fit(T).kneighbors(Q)
    ref_d, ref_i = reference.knn(T, Q, 10)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shift", [0.0, 1e3])
def test_screen_certifies_ordinary_data_and_matches_the_reference(shift, dtype, rng):
    X = (rng.standard_normal((500, 30)) + shift).astype(dtype)
    Q = (rng.standard_normal((200, 30)) + shift).astype(dtype)
    _, _, certified = _screen(X.astype(np.float64), Q.astype(np.float64), k=7, n_candidates=11)
    assert certified.all()  # no near ties in Gaussian data: no row needs the redo
    nn = fastdr.NearestNeighbors(n_neighbors=7, algorithm="brute").fit(X)
    for (dist, idx), (ref_d, ref_i) in [(nn.kneighbors(Q), reference.knn(X, Q, 7)),
                                        (nn.kneighbors(), reference.knn(X, X, 7, True))]:
        np.testing.assert_array_equal(idx, ref_i)
        # float32 input gets its distances back in float32
        np.testing.assert_allclose(dist, ref_d, rtol=1e-12 if dtype == np.float64 else 1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_binary_data_ties_are_broken_by_index_like_the_reference(dtype, rng):
    X = rng.integers(0, 2, (300, 24)).astype(dtype)
    nn = fastdr.NearestNeighbors(n_neighbors=6, algorithm="brute").fit(X)
    dist, idx = nn.kneighbors(X[:50])
    ref_d, ref_i = reference.knn(X, X[:50], 6)
    np.testing.assert_array_equal(idx, ref_i)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-6)


def test_screen_bound_coefficients():
    # eps = 2 (n + 4) u for GEMM depth n = d + 1 (see the module docstring)
    assert knn_screen.screen_eps(50) == 2 * 55 * 2.0**-24
    assert 0 < knn_screen.screen_abs(50) < 2.0**-130


@pytest.mark.parametrize("n_valid,n", [(16, 16), (17, 16), (512, 16), (300, 7), (64, 1)])
def test_first_block_threshold_leaves_at_least_n_keys_at_or_below_it(n_valid, n):
    from fastdr._kernels.knn.screen import _prime_threshold

    rng = np.random.default_rng(n_valid + n)
    for keys in (rng.standard_normal(n_valid).astype(np.float32),
                 np.round(rng.standard_normal(n_valid), 1).astype(np.float32),  # ties
                 np.sort(rng.standard_normal(n_valid)).astype(np.float32)[::-1].copy()):
        threshold = _prime_threshold(keys, n_valid, n)
        assert np.sum(keys.astype(np.float64) <= threshold) >= n
        # and it is a key's value: never looser than the largest key
        assert threshold in keys.astype(np.float64)


@pytest.mark.parametrize("block", [16, 64, 512])  # 301 rows: ragged last blocks
def test_screen_packing_serial_twins_are_bit_identical(block):
    rng = np.random.default_rng(3)
    T = rng.standard_normal((301, 23)) * 3 + 1
    centre = T.mean(axis=0)
    norms = ((T - centre) ** 2).sum(axis=1)
    with parallel_section(None):
        packed = knn_screen.pack_screen_targets(T, centre, 0.25, norms, 1e-6, block)
        queries = knn_screen.pack_screen_queries(T, centre, 0.25)
    np.testing.assert_array_equal(
        knn_screen.pack_screen_targets_serial(T, centre, 0.25, norms, 1e-6, block), packed)
    np.testing.assert_array_equal(knn_screen.pack_screen_queries_serial(T, centre, 0.25),
                                  queries)
    rows = np.arange(301)
    blk, col = rows // block, rows % block
    np.testing.assert_array_equal(packed[blk, :23, col],
                                  (-2.0 * ((T - centre) * 0.25)).astype(np.float32))
    pad = np.ones(packed.shape, dtype=bool)
    pad[blk, :, col] = False
    assert (packed[pad] == 0).all()
    np.testing.assert_array_equal(queries[:, :23], ((T - centre) * 0.25).astype(np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_queries_that_are_the_fitted_array_reuse_its_norms_exactly(dtype, rng):
    """kneighbors(X) on the fitted X itself (its norms are reused) equals kneighbors on a
    copy of X (norms computed afresh), bit for bit, and the reference."""
    X = (rng.standard_normal((700, 40)) * 3 + 5).astype(dtype)
    nn = fastdr.NearestNeighbors(n_neighbors=6, algorithm="brute").fit(X)
    same_d, same_i = nn.kneighbors(X)
    copy_d, copy_i = nn.kneighbors(X.copy())
    np.testing.assert_array_equal(same_i, copy_i)
    np.testing.assert_array_equal(same_d, copy_d)
    ref_d, ref_i = reference.knn(X.astype(np.float64), X.astype(np.float64), 6)
    np.testing.assert_array_equal(same_i, ref_i)


def _neighbourhoods(rng, m, k, n_train, ties):
    """Random neighbour lists and distances; ``ties`` puts zero distances in some rows and
    equal class weights in others."""
    idx = rng.integers(0, n_train, (m, k))
    dist = rng.uniform(0.1, 2.0, (m, k))
    if ties and m > 1:
        dist[0, : max(1, k // 2)] = 0.0  # coincident neighbours take all the weight
        dist[1] = 1.0  # equal weights
    return idx, dist


@pytest.mark.parametrize("m,k,n_classes", [(1, 1, 1), (1, 4, 3), (2, 2, 2), (40, 5, 3),
                                           (300, 11, 6)])
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_votes_and_weights_match_the_reference(rng, m, k, n_classes, weights):
    n_train = 50
    idx, dist = _neighbourhoods(rng, m, k, n_train, ties=True)
    y_codes = rng.integers(0, n_classes, n_train)
    if weights == "uniform":
        w = np.ones((m, k))
    else:
        w = vote.inverse_distance_weights(dist)
        np.testing.assert_array_equal(w, reference.inverse_distance_weights(dist))
    fractions = vote.class_votes(idx, w, y_codes, n_classes)
    np.testing.assert_allclose(fractions, reference.class_fractions(idx, w, y_codes, n_classes),
                               rtol=1e-13, atol=1e-15)
    classes = np.arange(n_classes)
    # the first class wins a tie, as in the reference vote
    np.testing.assert_array_equal(np.argmax(fractions, axis=1),
                                  reference.knn_vote(idx, dist, y_codes, classes, weights))


def test_class_votes_leave_a_weightless_row_at_zero():
    idx = np.array([[0, 1], [1, 0]])
    w = np.array([[0.0, 0.0], [1.0, 3.0]])
    got = vote.class_votes(idx, w, np.array([0, 1]), 2)
    np.testing.assert_array_equal(got, [[0.0, 0.0], [0.75, 0.25]])


@pytest.mark.parametrize("m,k,n_outputs", [(1, 1, 1), (1, 3, 2), (30, 4, 1), (200, 9, 3)])
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_weighted_means_match_the_reference(rng, m, k, n_outputs, weights):
    idx, dist = _neighbourhoods(rng, m, k, 60, ties=True)
    y = rng.standard_normal((60, n_outputs))
    w = np.ones((m, k)) if weights == "uniform" else vote.inverse_distance_weights(dist)
    got = vote.weighted_means(idx, w, y)
    np.testing.assert_allclose(got, reference.knn_mean(idx, dist, y, weights), rtol=1e-13,
                               atol=1e-15)
