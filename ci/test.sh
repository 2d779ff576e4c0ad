#!/usr/bin/env bash
# CI: install the test extras and run the suite exactly as the README says; then ruff, the
# coverage pass (kernels run as Python with
# NUMBA_DISABLE_JIT=1 so their lines count), and last the `slow` bench smoke runs, which need
# the bench extras. On 2 cores the whole run takes about 30 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$(mktemp -d)}"
export PIP_DISABLE_PIP_VERSION_CHECK=1
PYTHON="${PYTHON:-python3}"
echo "== $($PYTHON --version), numba cache: $NUMBA_CACHE_DIR"
# --- the README's test command (deselects `slow`) ---
$PYTHON -m pip install -q -e ".[test]"
$PYTHON -m pytest -q
# --- lint ---
$PYTHON -m ruff check fastdr tests bench ci
# --- coverage ---
PYTHON="$PYTHON" bash ci/coverage.sh
# --- the bench smoke runs (`slow`), with the bench extras ---
echo "== slow tests: bench/ end to end"
$PYTHON -m pip install -q -e ".[test,bench]"
$PYTHON -m pytest -q -m slow
