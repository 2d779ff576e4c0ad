#!/usr/bin/env bash
# Second pass of the test suite with NUMBA_DISABLE_JIT=1 under coverage, so that kernel
# lines count; fails below 90% total coverage.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
export NUMBA_DISABLE_JIT=1
$PYTHON -m coverage erase
$PYTHON -m coverage run --source=fastdr -m pytest -q -p no:randomly \
    -m "not jit_only and not slow" --durations=15 \
    --ignore=tests/test_sklearn_compat.py
$PYTHON -m coverage report --fail-under=90 --skip-covered --show-missing
