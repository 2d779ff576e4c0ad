#!/usr/bin/env bash
# The package as a user installs it, with the oldest versions pyproject.toml declares: build
# the sdist and the wheel, check them with twine, install the wheel (not the source tree)
# with its [test] extra into a fresh venv pinned to the declared lower bounds, and run the
# whole default suite from a directory that holds the tests but no fastdr/, so every import
# resolves to the installed package and a file missing from the wheel fails here. The main
# run (README) covers the newest versions. Installs from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
WORK="$(mktemp -d)"
NUMBA_CACHE_DIR="$(mktemp -d)"
export NUMBA_CACHE_DIR
trap 'rm -rf "$WORK" "$NUMBA_CACHE_DIR"' EXIT
# the lower bounds of pyproject.toml's dependencies and [test] extra, pinned
cat > "$WORK/oldest.txt" <<'PINS'
numba==0.60.0
numpy==2.0.0
scipy==1.13.0
scikit-learn==1.9.0
pandas==2.2.2
PINS
echo "== build: sdist and wheel"
$PYTHON -m venv "$WORK/build-env"
"$WORK/build-env/bin/python" -m pip install -q --disable-pip-version-check build twine
"$WORK/build-env/bin/python" -m build -q --outdir "$WORK/dist" . > /dev/null
"$WORK/build-env/bin/python" -m twine check --strict "$WORK/dist"/*
WHEEL="$(ls "$WORK"/dist/fastdr-*.whl)"
echo "== wheel into a fresh venv with the oldest declared versions: $(basename "$WHEEL")"
$PYTHON -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --disable-pip-version-check \
    -c "$WORK/oldest.txt" "$WHEEL[test]"
mkdir "$WORK/run"
cp -r tests bench docs pyproject.toml README.md CHANGELOG.md LICENSE CITATION.cff "$WORK/run/"
cd "$WORK/run"
"$WORK/venv/bin/python" - "$WORK/oldest.txt" <<'PY'
import importlib.metadata as md
import pathlib
import sys

import fastdr

assert "site-packages" in fastdr.__file__, fastdr.__file__  # the wheel, not the source tree
for line in pathlib.Path(sys.argv[1]).read_text().split():
    name, version = line.split("==")
    assert md.version(name) == version, (name, md.version(name), version)
print("fastdr", fastdr.__version__, "from", fastdr.__file__)
PY
"$WORK/venv/bin/python" -m pytest -q -p no:cacheprovider
