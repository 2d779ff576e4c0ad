#!/usr/bin/env bash
# Install the test extras and run the suite (the README's test command), plus ruff.
set -euo pipefail
cd "$(dirname "$0")/.."
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$(mktemp -d)}"
export PIP_DISABLE_PIP_VERSION_CHECK=1
PYTHON="${PYTHON:-python3}"
echo "== python: $($PYTHON --version), numba cache: $NUMBA_CACHE_DIR"
# --- the README's test command starts here ---
$PYTHON -m pip install -q -e ".[test]"
$PYTHON -m pytest -q
# --- the README's test command ends here ---
$PYTHON -m ruff check fastdr tests bench ci
