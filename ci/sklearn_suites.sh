#!/usr/bin/env bash
# scikit-learn's own test files for the estimators fastdr re-implements, run with fastdr's
# classes and functions swapped in for scikit-learn's (ci/sklearn_suites/conftest.py says how
# and which). The files are copied from the installed scikit-learn, which must be the pinned
# release (the tests are that release's), into a temporary directory with the conftest, and
# pytest runs there, serially, so this repository's pytest settings and conftest play no part.
# Prints one line per file, `file passed/total` (total = passed + failed + errors; skipped,
# and the known failures, xfailed, apart), then the wall time. The tests listed in
# ci/sklearn_suites/known_failures.txt, each under its reason, are expected to fail (strict
# xfail); any other failure, or a listed test that passes, makes the exit status non-zero.
# numba's cache is wherever NUMBA_CACHE_DIR (or numba's default, beside fastdr's sources) says:
# with it cold the whole run takes about 3 minutes on 2 cores, warm about 1.5 to 2.
#
#   bash ci/sklearn_suites.sh                                    # all the files below
#   bash ci/sklearn_suites.sh manifold/tests/test_isomap.py     # some of them (or any other
#                                                               # file of sklearn's, by path)
#   PYTEST_ARGS="-k radius" bash ci/sklearn_suites.sh neighbors/tests/test_neighbors.py
#   bash ci/sklearn_suites.sh --pinned-venv                      # CI: a venv over this
#       # environment (its packages and fastdr visible) with scikit-learn==SKLEARN_PIN in it
set -euo pipefail
SKLEARN_PIN="1.9.1"
FILES=(
    manifold/tests/test_isomap.py
    manifold/tests/test_locally_linear.py
    manifold/tests/test_classical_mds.py
    neighbors/tests/test_nca.py
    decomposition/tests/test_incremental_pca.py
    decomposition/tests/test_kernel_pca.py
    decomposition/tests/test_pca.py
    tests/test_discriminant_analysis.py
    neighbors/tests/test_neighbors.py
)
cd "$(dirname "$0")/.."
repo="$PWD"
PYTHON="${PYTHON:-python3}"
if [ "${1:-}" = "--pinned-venv" ]; then
    shift
    venv="$(mktemp -d)/venv"
    $PYTHON -m venv --system-site-packages "$venv"
    "$venv/bin/python" -m pip install -q "scikit-learn==$SKLEARN_PIN"
    PYTHON="$venv/bin/python"
fi
if [ $# -gt 0 ]; then FILES=("$@"); fi
have="$($PYTHON -c 'import sklearn; print(sklearn.__version__)')"
if [ "$have" != "$SKLEARN_PIN" ]; then
    echo "ci/sklearn_suites.sh: scikit-learn $have is installed; these suites are pinned to" \
        "scikit-learn $SKLEARN_PIN (its test files are what is run): install" \
        "scikit-learn==$SKLEARN_PIN or move SKLEARN_PIN at the top of this script" >&2
    exit 2
fi
skdir="$($PYTHON -c 'import os, sklearn; print(os.path.dirname(sklearn.__file__))')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$repo/ci/sklearn_suites/conftest.py" "$work/conftest.py"
cp "$repo/ci/sklearn_suites/known_failures.txt" "$work/known_failures.txt"
printf '[pytest]\n' >"$work/pytest.ini"  # pins the rootdir (and the conftest's scope) here
for f in "${FILES[@]}"; do
    if [ ! -f "$skdir/$f" ]; then
        echo "ci/sklearn_suites.sh: no $f in $skdir" >&2
        exit 2
    fi
    mkdir -p "$work/$(dirname "$f")"
    cp "$skdir/$f" "$work/$f"
done
cd "$work"
echo "== scikit-learn $have's tests from $skdir, fastdr from" \
    "$($PYTHON -c 'import os, fastdr; print(os.path.dirname(fastdr.__file__))'), in $work"
start=$SECONDS
rc=0
# --import-mode=importlib as in scikit-learn's own pytest settings
# shellcheck disable=SC2086
$PYTHON -m pytest -p no:cacheprovider -q -rf -o addopts="" --import-mode=importlib \
    ${PYTEST_ARGS:-} "${FILES[@]}" || rc=$?
echo "== wall time: $((SECONDS - start)) s (pytest exit status $rc)"
exit "$rc"
