#!/usr/bin/env bash
# CI: install the test extras and run the suite exactly as the README says; then ruff,
# scikit-learn's and metric-learn's own test files for the estimators fastdr replaces, the
# documentation build (warnings as errors, gallery executed, pages checked in a browser), the
# kernel tests under NUMBA_BOUNDSCHECK=1 with every numba-internals fallback forced, the coverage pass (kernels
# run as Python with NUMBA_DISABLE_JIT=1 so their lines count), the built wheel installed in
# a fresh venv with the oldest versions declared (the main run has the newest) running the
# version-sensitive tests, and last the `slow` bench smoke runs, which need the bench extras.
# Each step prints its wall time; the whole run must stay well inside CI's 90 minutes on 2
# cores (aim: 60 at most), so a new step makes room elsewhere.
# Two steps are bound by numba's cold compilation, which uses one core: the oldest versions
# (own venv and cache; the longer of the two) run beside the README tests, and the checked
# kernels (own numba cache) beside the coverage pass. Nothing installs into the main
# environment while a background step reads from it. A background step's log is printed when
# it ends (in full if it failed).
set -euo pipefail
cd "$(dirname "$0")/.."
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-$(mktemp -d)}"
export PIP_DISABLE_PIP_VERSION_CHECK=1
PYTHON="${PYTHON:-python3}"
LOGS="$(mktemp -d)"
# a failing foreground step must not leave a background step running
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$LOGS"' EXIT
echo "== $($PYTHON --version), numba cache: $NUMBA_CACHE_DIR"
step() { echo "== step done: $1 at $((SECONDS / 60)) min $((SECONDS % 60)) s"; }
# start NAME COMMAND...: run a step in the background, its output to its own log
start() {
    local name="$1"; shift
    ( "$@"; echo "== $name ended at $((SECONDS / 60)) min $((SECONDS % 60)) s" ) \
        > "$LOGS/$name.log" 2>&1 &
    eval "pid_$name=$!"
}
# finish NAME: wait for a background step; its log's tail if it passed, all of it if not
finish() {
    local pid
    eval "pid=\$pid_$1"
    if wait "$pid"; then
        echo "== background step $1:"; tail -n 25 "$LOGS/$1.log"; step "$1"
    else
        echo "== background step $1 FAILED:"; cat "$LOGS/$1.log"; exit 1
    fi
}
# --- the README's test command (deselects `slow`) ---
$PYTHON -m pip install -q -e ".[test]"
# --- beside it: the wheel, installed with the oldest declared versions (own venv and cache,
# from PyPI) ---
start oldest_versions env PYTHON="$PYTHON" bash ci/oldest_versions.sh
$PYTHON -m pytest -q
step "README tests"
# --- lint ---
$PYTHON -m ruff check fastdr tests bench ci examples docs
step ruff
# --- scikit-learn's own test files with fastdr's estimators swapped in (the pinned release's
# files; its known failures listed with their reasons in ci/sklearn_suites/known_failures.txt)
PYTHON="$PYTHON" bash ci/sklearn_suites.sh --pinned-venv
step "scikit-learn's suites"
# --- metric-learn 0.7.0's own test files with fastdr's learners swapped in (a venv over this
# environment with metric-learn installed --no-deps; its known failures listed with their
# reasons in ci/metric_learn_suite/known_failures.txt)
PYTHON="$PYTHON" bash ci/metric_learn_suite.sh --venv
step "metric-learn's suite"
# --- the documentation: Sphinx with warnings as errors, the gallery executed, the HTML
# checked statically and in headless Chromium (it installs the docs extras into the main
# environment: before the checked kernels import from it)
PYTHON="$PYTHON" bash ci/docs.sh
step docs
finish oldest_versions
# --- beside the coverage pass: kernels with bounds checking and the numba-internals
# fallbacks (own cache) ---
start checked_kernels env PYTHON="$PYTHON" bash ci/checked_kernels.sh
PYTHON="$PYTHON" bash ci/coverage.sh
step coverage
finish checked_kernels
# --- the bench smoke runs (`slow`), with the bench extras ---
echo "== slow tests: bench/ end to end"
$PYTHON -m pip install -q -e ".[test,bench]"
$PYTHON -m pytest -q -m slow
step slow
