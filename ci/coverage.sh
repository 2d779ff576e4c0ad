#!/usr/bin/env bash
# Second pass of the test suite with NUMBA_DISABLE_JIT=1 under coverage, so that kernel
# lines count; fails below 90% total coverage.
# The fork-while-busy test is left to the compiled passes: under coverage a forked child can
# hang in coverage's own tracer (a lock of coverage's Python-level should-trace path, copied
# held from the busy thread, is taken when the child's first at-fork handler is traced;
# gdb shows the child blocked in CTracer_handle_call inside run_at_forkers).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
export NUMBA_DISABLE_JIT=1
$PYTHON -m coverage erase
$PYTHON -m coverage run --source=fastdr -m pytest -q -p no:randomly \
    -m "not jit_only and not slow" --durations=15 \
    --ignore=tests/contract/test_sklearn_compat.py \
    --deselect tests/runtime/test_fork.py::test_fork_while_another_thread_runs_isomap
$PYTHON -m coverage report --fail-under=90 --skip-covered --show-missing
