#!/usr/bin/env bash
# The kernel tests with every numba-internals fallback forced (FASTDR_NUMBA_FALLBACKS=1: plain
# njit without _nrt, no prefetch, plain stores and no fence, the bit-count trailing zeros; see
# fastdr/_kernels/_numba_ext.py), compiled afresh into an empty cache (a kernel cached with the
# native versions must not be reused), so that a numba release that drops one still leaves
# working, exact kernels. A few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
export FASTDR_NUMBA_FALLBACKS=1
NUMBA_CACHE_DIR="$(mktemp -d)"
export NUMBA_CACHE_DIR
trap 'rm -rf "$NUMBA_CACHE_DIR"' EXIT
echo "== kernels with FASTDR_NUMBA_FALLBACKS=1, numba cache: $NUMBA_CACHE_DIR"
# the switch is live: no native version may be chosen
$PYTHON - <<'PY'
from fastdr._kernels._numba_ext import natives_in_use

used = natives_in_use()
if any(used.values()):
    raise SystemExit(f"FASTDR_NUMBA_FALLBACKS=1 left native versions in use: {used}")
PY
# the users of the intrinsics: ctz (k-NN screens and leaf joins), prefetch and _nrt (NN-descent),
# streaming stores (pairwise_distances)
$PYTHON -m pytest -q -p no:randomly -m "not slow" tests/kernels/test_numba_ext.py \
    tests/kernels/test_knn.py tests/kernels/test_knn_brute.py tests/kernels/test_nndescent_kernels.py \
    tests/neighbors/test_nndescent.py tests/neighbors/test_pairwise.py \
    -k "not recall_at_defaults and not recall_heavier"
