#!/usr/bin/env bash
# metric-learn 0.7.0's own test files, run with fastdr's learners swapped in for
# metric-learn's (ci/metric_learn_suite/conftest.py says how, which, and the shims metric-learn
# 0.7 needs on scikit-learn >= 1.8). The files are metric-learn's test/ folder at 0.7.0, copied
# into a temporary directory as mltest/ (the name test is the standard library's package; the
# `from test.` imports are rewritten) beside the conftest, and pytest runs there, serially, so
# this repository's pytest settings and conftest play no part. Prints one line per file,
# `file: group passed/total ...` (total = passed + failed + errors; skipped and the known
# failures, xfailed, apart), by the learners a test uses: those fastdr has, only those it lacks
# (LSML, SCML until written), or none (metric-learn's helpers); then the wall time. The tests
# listed in ci/metric_learn_suite/known_failures.txt, each under its reason, are expected to
# fail (strict xfail); any other failure, or a listed test that passes, makes the exit status
# non-zero. With --no-swap (or FASTDR_SWAP=0) metric-learn's own learners run instead, for its
# own pass rate in the same environment (the known failures are then not applied).
#
#   bash ci/metric_learn_suite.sh                      # all the files, metric-learn importable
#   bash ci/metric_learn_suite.sh test_base_metric.py  # some of them (names in metric-learn's test/)
#   bash ci/metric_learn_suite.sh --no-swap            # metric-learn's own learners
#   PYTEST_ARGS="-k LMNN" bash ci/metric_learn_suite.sh test_sklearn_compat.py
#   bash ci/metric_learn_suite.sh --venv               # CI: a venv over this environment
#       # (fastdr's dependencies visible) with metric-learn==0.7.0 installed --no-deps
#       # (its pinned scikit-learn < 1.8 would replace fastdr's >= 1.9)
#
# The test files: from METRIC_LEARN_GIT (a clone of scikit-learn-contrib/metric-learn, tag
# v0.7.0) when set, else from the sdist (pip download), which lacks metric_learn_test.py (the
# per-learner tests): that one file is then fetched from GitHub, and left out, with a
# warning, when it cannot be. The tests need no data downloads (iris, make_* only); the
# skggm tests are skipped unless skggm (inverse_covariance) is installed.
set -euo pipefail
ML_VERSION="0.7.0"
cd "$(dirname "$0")/.."
repo="$PWD"
PYTHON="${PYTHON:-python3}"
export FASTDR_SWAP="${FASTDR_SWAP:-1}"
while [ $# -gt 0 ]; do
    case "$1" in
    --venv)
        venv="$(mktemp -d)/venv"
        $PYTHON -m venv --system-site-packages "$venv"
        "$venv/bin/python" -m pip install -q --no-deps "metric-learn==$ML_VERSION"
        PYTHON="$venv/bin/python"
        shift
        ;;
    --no-swap)
        FASTDR_SWAP=0
        shift
        ;;
    *) break ;;
    esac
done
have="$($PYTHON -c 'import importlib.metadata as m; print(m.version("metric-learn"))' \
    2>/dev/null || echo none)"
if [ "$have" != "$ML_VERSION" ]; then
    echo "ci/metric_learn_suite.sh: metric-learn $have is installed for $PYTHON; these tests" \
        "are metric-learn $ML_VERSION's: pip install --no-deps metric-learn==$ML_VERSION, or" \
        "pass --venv" >&2
    exit 2
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
if [ -n "${METRIC_LEARN_GIT:-}" ]; then
    git -C "$METRIC_LEARN_GIT" archive "v$ML_VERSION" test | tar x -C "$work/src"
else
    $PYTHON -m pip download -q --no-deps --no-binary :all: "metric-learn==$ML_VERSION" \
        -d "$work/sdist" 2>/dev/null
    tar xzf "$work/sdist/metric-learn-$ML_VERSION.tar.gz" -C "$work/sdist"
    mv "$work/sdist/metric-learn-$ML_VERSION/test" "$work/src/test"
    url="https://raw.githubusercontent.com/scikit-learn-contrib/metric-learn/v$ML_VERSION"
    if ! curl -fsSL "$url/test/metric_learn_test.py" -o "$work/src/test/metric_learn_test.py"
    then
        rm -f "$work/src/test/metric_learn_test.py"
        echo "ci/metric_learn_suite.sh: WARNING: metric_learn_test.py (not in the sdist) could" \
            "not be fetched from GitHub; set METRIC_LEARN_GIT to a clone to run it" >&2
    fi
fi
mkdir "$work/mltest"
: >"$work/mltest/__init__.py"
for f in "$work"/src/test/*.py; do
    sed -e 's/^from test\./from mltest./' -e 's/^import test\./import mltest./' "$f" \
        >"$work/mltest/$(basename "$f")"
done
cp "$repo/ci/metric_learn_suite/conftest.py" "$work/conftest.py"
cp "$repo/ci/metric_learn_suite/known_failures.txt" "$work/known_failures.txt"
# pins the rootdir (and the conftest's scope) here; metric-learn's own pytest.ini markers
printf '[pytest]\nmarkers =\n  integration: mark a test as integration\n  unit: mark a test as unit\n' \
    >"$work/pytest.ini"
FILES=()
for f in "$@"; do FILES+=("mltest/$(basename "$f")"); done
if [ ${#FILES[@]} -eq 0 ]; then FILES=(mltest); fi
# this checkout's fastdr, whatever is installed
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
cd "$work"
echo "== metric-learn $ML_VERSION's tests, fastdr from" \
    "$($PYTHON -c 'import os, fastdr; print(os.path.dirname(fastdr.__file__))')," \
    "FASTDR_SWAP=$FASTDR_SWAP, in $work"
start=$SECONDS
rc=0
# shellcheck disable=SC2086
$PYTHON -m pytest -p no:cacheprovider -q -rf -o addopts="" ${PYTEST_ARGS:-} "${FILES[@]}" ||
    rc=$?
echo "== wall time: $((SECONDS - start)) s (pytest exit status $rc)"
exit "$rc"
