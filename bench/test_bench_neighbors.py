"""Distances and neighbours: pairwise distances, exact k-NN in float64 (vs scikit-learn) and
float32 (vs faiss IndexFlatL2), the k-NN classifier with distance weights, the k-d tree, and
Mahalanobis distances."""

import pytest

from bench.harness import run_workload


@pytest.mark.workload("pairwise")
def test_pairwise_distances(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)


@pytest.mark.workload("knn_f64")
def test_knn_float64(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)


@pytest.mark.workload("knn_f32")
def test_knn_float32(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)


@pytest.mark.workload("knn_classifier")
def test_knn_classifier_predict(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)


@pytest.mark.workload("knn_kdtree")
def test_knn_kdtree(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)


@pytest.mark.workload("mahalanobis")
def test_mahalanobis_pairwise(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)
