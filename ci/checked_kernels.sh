#!/usr/bin/env bash
# The kernel tests compiled with two switches at once, into an empty numba cache (a kernel
# cached without them must not be reused):
# - NUMBA_BOUNDSCHECK=1: any out-of-bounds access in a kernel raises IndexError instead of
#   reading or writing memory it does not own;
# - FASTDR_NUMBA_FALLBACKS=1: every numba-internals primitive of fastdr/_kernels/_numba_ext.py
#   takes its plain fallback (njit without _nrt, no prefetch, plain stores and no fence, the
#   bit-count trailing zeros), so that a numba release that drops one still leaves working,
#   exact kernels. The native versions run in the main pass; the fallbacks' plain indexing is
#   what the bounds checks can see.
# Runs every direct kernel test (tests/kernels: each kernel module against its naive
# reference), the estimator tests that reach each kernel family end to end, and the bad-input
# catalogue over every estimator.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
export NUMBA_BOUNDSCHECK=1 FASTDR_NUMBA_FALLBACKS=1
NUMBA_CACHE_DIR="$(mktemp -d)"
export NUMBA_CACHE_DIR
trap 'rm -rf "$NUMBA_CACHE_DIR"' EXIT
echo "== kernels with NUMBA_BOUNDSCHECK=1 and FASTDR_NUMBA_FALLBACKS=1, numba cache: $NUMBA_CACHE_DIR"
# both switches are live: an out-of-range read in a compiled function must raise, and no
# native primitive may be chosen
$PYTHON - <<'PY'
import numba
import numpy as np

from fastdr._kernels._numba_ext import natives_in_use

assert numba.config.BOUNDSCHECK, "numba did not pick up NUMBA_BOUNDSCHECK=1"
read = numba.njit(lambda a, i: a[i])
try:
    read(np.zeros(3), 5)
except IndexError:
    pass
else:
    raise SystemExit("an out-of-bounds read did not raise: bounds checking is off")
used = natives_in_use()
if any(used.values()):
    raise SystemExit(f"FASTDR_NUMBA_FALLBACKS=1 left native versions in use: {used}")
PY
run() { $PYTHON -m pytest -q -p no:randomly -p no:cacheprovider -m "not slow and not jit_only" "$@"; }
# every kernel module against its reference
run tests/kernels
# each family through its estimators: exact search, pairwise, LLE, MDS
run tests/neighbors/test_neighbors.py \
    tests/neighbors/test_pairwise.py tests/manifold/test_lle.py tests/manifold/test_mds.py
run tests/eigen/test_eigen.py -k "block_product or upper_triangle"
run tests/parity/test_parity_pca.py -k "gram or fused or out_of_range"
# sparse k-NN, radius, pairwise
run tests/neighbors/test_sparse_neighbours.py
# kernel_matrix, centering
run tests/decomposition/test_decomposition.py -k "kernel_matrices or rbf_kernels or exponential or mirror \
or centre_kernel or centred_kernel or upper_triangle"
# nca, mlkr, mmc, itml, scml, class_stats
run tests/metric_learning/test_nca.py -k "naive_reference or blocking or sparse_and_dense or candidates \
or very_large or mini_batch or exp_matches"
run tests/metric_learning/test_mmc.py -k "pair_kernels"
run tests/metric_learning/test_mlkr.py -k "pairwise_definition or blocks_chunks"
run tests/metric_learning/test_itml.py -k "sweep_matches or hard_bounds"
run tests/metric_learning/test_scml.py -k "solver_gives or naive_solver or supervised_lda"
run tests/discriminant/test_discriminant.py -k "class_kernels"
# NN-descent through its estimators, their jit_only tests too (jit_only means "too slow
# interpreted", and these are compiled); the m=20,000 recall tests test recall, not memory
$PYTHON -m pytest -q -p no:randomly -p no:cacheprovider -m "not slow" tests/neighbors/test_nndescent.py \
    tests/neighbors/test_nndescent_estimators.py \
    -k "not recall_at_defaults and not recall_heavier"
# the Isomap pipeline end to end, and the bad-input catalogue over every estimator
run tests/manifold/test_isomap.py -k "naive_reference or disconnected or landmark_isomap"
run tests/contract/test_bad_input.py
run tests/metric_learning/test_lmnn.py -k "triplet_sums or single_block"
