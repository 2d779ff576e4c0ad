#!/usr/bin/env bash
# The documentation as a reader gets it: install the [docs] extra, build the Sphinx site from
# a clean state with warnings as errors (numpydoc's validation of every public docstring
# included) and the examples gallery executed, then check the HTML (ci/check_docs.py): every
# internal link and image of every page, and the first pages loaded in headless Chromium.
# Chromium comes from the system's packages; where there is none and apt-get can install it,
# it is installed, and where it cannot the step says so and keeps the static check.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
$PYTHON -m pip install -q -e ".[docs]"
rm -rf docs/_build docs/generated docs/auto_examples docs/sg_execution_times.rst
$PYTHON -m sphinx -W --keep-going -q -b html docs docs/_build/html
if ! command -v chromium > /dev/null && command -v apt-get > /dev/null && [ "$(id -u)" = 0 ]; then
    echo "== installing chromium for the browser check"
    (timeout 300 apt-get update -qq && timeout 300 apt-get install -y -qq chromium) \
        > /dev/null 2>&1 || echo "== could not install chromium"
fi
$PYTHON ci/check_docs.py docs/_build/html --browser auto
