"""fastdr.warmup(): compiles the common kernels up front and reports the time taken."""

import logging

import numpy as np
import pytest

import fastdr
from fastdr._kernels.distances import euclidean as distances
from fastdr._kernels.graph import shortest_paths as graph
from fastdr._kernels.knn import brute as knn
from fastdr._kernels.knn import screen as knn_screen
from fastdr._kernels.learners import nca
from fastdr._kernels.lle import assembly as lle_assembly
from fastdr._kernels.lle import weights as lle
from fastdr._kernels.nndescent import leaves as nndescent_leaves
from fastdr._kernels.nndescent import rounds as nndescent
from fastdr._kernels.nndescent import rp_trees
from fastdr._kernels.nndescent import search as nndescent_search
from fastdr._kernels.spectral import kernel_matrix

STEPS = ["knn_float64", "knn_float32", "nndescent", "pairwise", "dijkstra", "lle",
         "kernel_matrix", "nca"]


def _signatures():
    kernels = [knn.knn_direct, knn_screen.knn_screen, knn_screen.knn_screen_redo,
               distances.pairwise_sqeuclidean_gemm, graph.all_pairs_upper,
               kernel_matrix.rbf_direct, kernel_matrix.rbf_from_gram_inplace,
               nca.nca_objective_gradient]
    kernels += [distances.centred_sqnorms, distances.centred_sqnorms_serial,
                distances.centre_rows, distances.centre_rows_serial,
                distances.pairwise_self_gemm,
                distances.pack_queries, distances.pack_queries_serial, distances.pack_targets,
                distances.pack_targets_serial, knn_screen.pack_screen_queries,
                knn_screen.pack_screen_queries_serial, knn_screen.pack_screen_targets,
                knn_screen.pack_screen_targets_serial]
    kernels += [lle.barycenter_weights, lle_assembly.set_row_counts, lle_assembly.block_fill,
                lle.weighted_rows]
    kernels += [rp_trees.build_tree, nndescent_leaves.init_from_leaves_gram,
                nndescent_leaves.merge_rows, nndescent_leaves.fill_random,
                nndescent.sample_candidates, nndescent.local_join, nndescent.apply_updates,
                nndescent.exact_sort, nndescent.renumber_sort, nndescent_search.search]
    return {k.py_func.__qualname__: len(k.signatures) for k in kernels}


def test_warmup_reports_seconds_per_step(capsys, caplog):
    with caplog.at_level(logging.INFO, logger="fastdr"):
        report = fastdr.warmup(verbose=True)
    assert list(report) == STEPS
    assert all(isinstance(v, float) and v >= 0 for v in report.values())
    printed = capsys.readouterr().out
    assert all(name in printed for name in STEPS) and "total" in printed
    assert "fastdr.warmup" in caplog.text
    assert "warmup" in fastdr.__all__ and "warmup" in dir(fastdr)


@pytest.mark.jit_only
def test_warmup_compiles_both_dtypes_and_a_second_call_compiles_nothing():
    fastdr.warmup()
    after_first = _signatures()
    # float32 and float64 versions of the k-NN and pairwise kernels exist
    for name in ("knn_screen", "knn_screen_redo", "knn_direct", "pairwise_sqeuclidean_gemm",
                 "build_tree", "local_join", "search", "centred_sqnorms", "pack_targets",
                 "pack_targets_serial"):
        assert after_first[name] >= 2, (name, after_first[name])
    assert all(count >= 1 for count in after_first.values()), after_first
    second = fastdr.warmup()
    assert _signatures() == after_first  # nothing left to compile
    assert sum(second.values()) < 30.0  # a few tenths of a second unloaded


@pytest.mark.jit_only  # compiled signatures do not exist under NUMBA_DISABLE_JIT
def test_fit_after_warmup_needs_no_new_knn_signature():
    fastdr.warmup()
    before = _signatures()
    X = np.random.default_rng(5).standard_normal((300, 24)).astype(np.float32)
    fastdr.NearestNeighbors(n_neighbors=4, algorithm="brute").fit(X).kneighbors(X[:50])
    fastdr.pairwise_distances(X[:50], X)
    for data in (X, X.astype(np.float64)):  # NN-descent, as the estimators use it
        fastdr.NearestNeighbors(n_neighbors=4, algorithm="nndescent").fit(data).kneighbors(
            data[:50])
    assert _signatures() == before
