#!/usr/bin/env bash
# The kernel tests under the oldest numba that pyproject.toml declares (numba>=0.60), in a
# venv of its own with a numpy that numba accepts (0.60 wants numpy<2.1); the main run covers
# the newest. Private numba options and intrinsics live in fastdr/_kernels/_numba_ext.py, and
# this run checks that they (or their fallbacks) still compile there. Installs from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
OLDEST_NUMBA="0.60.0"
VENV="$(mktemp -d)"
NUMBA_CACHE_DIR="$(mktemp -d)"
export NUMBA_CACHE_DIR
trap 'rm -rf "$VENV" "$NUMBA_CACHE_DIR"' EXIT
echo "== kernels under numba $OLDEST_NUMBA, venv: $VENV"
$PYTHON -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check \
    "numba==$OLDEST_NUMBA" "numpy>=1.24,<2.1" "scipy>=1.11" "scikit-learn>=1.5" "pytest>=8" \
    "hypothesis>=6.100" "pandas>=2.0" "threadpoolctl>=3.1"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps -e .
"$VENV/bin/python" - <<PY
import numba

assert numba.__version__ == "$OLDEST_NUMBA", numba.__version__
PY
# the kernels that lean on numba most (intrinsics, private options, twins, fast-math), and one
# estimator end to end per kernel family
"$VENV/bin/python" -m pytest -q -p no:randomly -m "not slow" tests/kernels/test_numba_ext.py \
    tests/kernels/test_fastmath.py tests/kernels/test_twins.py tests/kernels/test_knn.py \
    tests/kernels/test_nndescent_kernels.py tests/kernels/test_distances.py \
    tests/kernels/test_spectral.py tests/kernels/test_graph.py tests/neighbors/test_pairwise.py \
    tests/manifold/test_lle.py
