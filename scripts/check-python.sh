#!/usr/bin/env bash
# Fail if pyflakes (Debian python3-pyflakes) finds a problem in the Python
# client, its tests, the test harnesses' launcher (tests/tools/tenured.py),
# the OpenAPI and browser tests, the comparison (compare/), the examples and the
# Python bench script: unused or undefined
# names, shadowed imports.
set -euo pipefail
cd "$(dirname "$0")/.."
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -m pyflakes python/tenure tests/integration/python scripts/check-includes.py \
    compare tests/tools/ha tests/tools/tenured.py tests/tools/openapi tests/ui \
    examples bench/py_keepalive.py bench/insn_client.py
