#!/usr/bin/env bash
# Install the test extras and run the suite exactly as the README says; then ruff, then the
# coverage pass (kernels run as Python with NUMBA_DISABLE_JIT=1 so their lines count).
set -euo pipefail
cd "$(dirname "$0")/.."
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$(mktemp -d)}"
export PIP_DISABLE_PIP_VERSION_CHECK=1
PYTHON="${PYTHON:-python3}"
echo "== $($PYTHON --version), numba cache: $NUMBA_CACHE_DIR"
# --- the README's test command ---
$PYTHON -m pip install -q -e ".[test]"
$PYTHON -m pytest -q
# --- lint and coverage ---
$PYTHON -m ruff check fastdr tests bench ci
PYTHON="$PYTHON" bash ci/coverage.sh
