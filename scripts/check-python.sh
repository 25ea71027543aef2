#!/usr/bin/env bash
# Fail if pyflakes (Debian python3-pyflakes) finds a problem in the Python
# client, its tests or the comparison (compare/): unused or undefined
# names, shadowed imports.
set -euo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -m pyflakes python/tenure tests/integration/python scripts/check-includes.py \
    compare tests/tools/ha
