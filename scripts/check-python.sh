#!/usr/bin/env bash
# Fail if pyflakes (Debian python3-pyflakes) finds a problem in the Python
# client, its tests, the comparison (compare/), the examples and the
# Python bench script: unused or undefined
# names, shadowed imports.
set -euo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -m pyflakes python/tenure tests/integration/python scripts/check-includes.py \
    compare tests/tools/ha examples bench/py_keepalive.py
