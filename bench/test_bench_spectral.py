"""Spectral and linear methods: PCA, classical MDS, kernel PCA (rbf) and LDA."""

import pytest

from bench.harness import run_workload


@pytest.mark.workload("pca")
def test_pca(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)


@pytest.mark.workload("classical_mds")
def test_classical_mds(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)


@pytest.mark.workload("kernel_pca")
def test_kernel_pca_rbf(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)


@pytest.mark.workload("lda")
def test_lda(benchmark, request, impl_label, m, d):
    run_workload(benchmark, request, impl_label, m, d)
