#!/usr/bin/env bash
# Second pass of the test suite with NUMBA_DISABLE_JIT=1 under coverage, so that kernel
# lines count; fails below 90% total coverage.
# The kernels run as plain Python here, one thread each (prange is range), so the suite is
# split in two halves run side by side, one per core, each recording its own data file
# (coverage run -p); `coverage combine` joins them before the report.
# The fork-while-busy test is left to the compiled passes: under coverage a forked child can
# hang in coverage's own tracer (a lock of coverage's Python-level should-trace path, copied
# held from the busy thread, is taken when the child's first at-fork handler is traced;
# gdb shows the child blocked in CTracer_handle_call inside run_at_forkers).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
export NUMBA_DISABLE_JIT=1
LOGS="$(mktemp -d)"
trap 'rm -rf "$LOGS"' EXIT
$PYTHON -m coverage erase
half() {
    $PYTHON -m coverage run -p --source=fastdr -m pytest -q -p no:randomly \
        -p no:cacheprovider -m "not jit_only and not slow" --durations=10 \
        --ignore=tests/contract/test_sklearn_compat.py \
        --deselect tests/runtime/test_fork.py::test_fork_while_another_thread_runs_isomap "$@"
}
# the two halves take about the same time in this mode
half tests/neighbors tests/manifold tests/metric_learning tests/dask tests/bench \
    > "$LOGS/a.log" 2>&1 &
first=$!
half tests/kernels tests/contract tests/parity tests/decomposition tests/discriminant \
    tests/eigen tests/runtime > "$LOGS/b.log" 2>&1 &
second=$!
status=0
wait "$first" || status=1
wait "$second" || status=1
for log in "$LOGS/a.log" "$LOGS/b.log"; do
    echo "== coverage half: $(basename "$log" .log)"
    if [ "$status" -ne 0 ]; then cat "$log"; else tail -n 16 "$log"; fi
done
[ "$status" -eq 0 ] || exit 1
$PYTHON -m coverage combine -q
$PYTHON -m coverage report --fail-under=90 --skip-covered --show-missing
