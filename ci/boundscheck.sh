#!/usr/bin/env bash
# The kernel-level tests with numba's bounds checking on (NUMBA_BOUNDSCHECK=1), compiled
# afresh into an empty cache (a kernel cached without checks must not be reused), so that any
# out-of-bounds access in a kernel raises IndexError instead of reading or writing memory it
# does not own. A subset that reaches every module of fastdr/_kernels, plus the bad-input
# catalogue (extreme magnitudes, duplicates, layouts) over every estimator; a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
export NUMBA_BOUNDSCHECK=1
NUMBA_CACHE_DIR="$(mktemp -d)"
export NUMBA_CACHE_DIR
trap 'rm -rf "$NUMBA_CACHE_DIR"' EXIT
echo "== kernels under NUMBA_BOUNDSCHECK=1, numba cache: $NUMBA_CACHE_DIR"
# the switch is live: an out-of-range read in a compiled function must raise
$PYTHON - <<'PY'
import numba
import numpy as np

assert numba.config.BOUNDSCHECK, "numba did not pick up NUMBA_BOUNDSCHECK=1"
read = numba.njit(lambda a, i: a[i])
try:
    read(np.zeros(3), 5)
except IndexError:
    pass
else:
    raise SystemExit("an out-of-bounds read did not raise: bounds checking is off")
PY
run() { $PYTHON -m pytest -q -p no:randomly -m "not slow and not jit_only" "$@"; }
# heap, reservoir, knn, knn_screen, distances, vote, pairs (radius), graph, graph_build, lle (and
# lle_methods, lle_assembly), mds_restore,
# matrix_checks, block_product, gram_product (and its PCA route); the kernel families' own
# reference tests (spectral: centering, block products, dot kernels; distances: matrix
# checks, CSR pairs, Minkowski and cosine; knn: screen, votes)
run tests/kernels/test_kernels_heap.py tests/neighbors/test_neighbors.py tests/kernels/test_knn.py \
    tests/kernels/test_spectral.py tests/kernels/test_distances.py tests/neighbors/test_pairwise.py \
    tests/kernels/test_graph.py tests/manifold/test_lle.py tests/parity/test_parity_lle.py tests/manifold/test_mds.py
run tests/eigen/test_eigen.py -k "block_product or upper_triangle"
run tests/kernels/test_gram_product.py tests/parity/test_parity_pca.py -k "gram or fused or out_of_range"
# sparse_distances (sparse k-NN, radius, pairwise)
run tests/neighbors/test_sparse_neighbours.py
# kernel_matrix, centering
run tests/decomposition/test_decomposition.py -k "kernel_matrices or rbf_kernels or exponential or mirror \
or centre_kernel or centred_kernel or upper_triangle"
# nca, mmc, class_stats
run tests/metric_learning/test_nca.py -k "naive_reference or blocking or sparse_and_dense or candidates \
or very_large or mini_batch or exp_matches"
run tests/metric_learning/test_mmc.py -k "pair_kernels"
run tests/discriminant/test_discriminant.py -k "class_kernels"
# nndescent, rp_trees, nndescent_search (graph, queries, estimators), vexp
# (their jit_only tests too: jit_only means "too slow interpreted", and these are compiled)
$PYTHON -m pytest -q -p no:randomly -m "not slow" tests/neighbors/test_nndescent.py \
    tests/neighbors/test_nndescent_estimators.py tests/kernels/test_vexp.py \
    -k "not recall_at_defaults and not recall_heavier"
# the Isomap pipeline end to end, and the bad-input catalogue over every estimator
run tests/manifold/test_isomap.py -k "naive_reference or disconnected or landmark_isomap"
run tests/contract/test_bad_input.py
