#!/usr/bin/env bash
# Install the Python package the way a user does (pip, no package index, no
# build isolation, into a target directory beside Debian's python3-pytest and
# python3-psycopg2) and run its tests against real tenured processes.
# Fails when the package does not install or import, when no test ran
# (pytest's exit code 5 is a failure here), and when any test fails.
set -euo pipefail
TN_SRC=${TN_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
TN_BIN=${TN_BIN:-$TN_SRC/build/dev/bin}
export TN_SRC TN_BIN
py=${TN_PYTHON:-/usr/bin/python3}
[ -x "$py" ] || py=$(command -v python3)
"$py" -c 'import pytest' 2>/dev/null ||
    { echo "FAIL: $py has no pytest (scripts/deps.sh installs python3-pytest)" >&2; exit 1; }

T=$(mktemp -d /tmp/tenure-py.XXXXXX)
trap 'rm -rf "$T"' EXIT
# A copy of the package, so that the build leaves nothing in the tree;
# --target rather than a venv: the same wheel build, without copying pip.
cp -r "$TN_SRC/python" "$T/src"
"$py" -m pip install -q --no-index --no-build-isolation --root-user-action=ignore \
    --disable-pip-version-check --target "$T/site" "$T/src" >"$T/pip.log" 2>&1 ||
    { cat "$T/pip.log" >&2; echo "FAIL: pip install ./python" >&2; exit 1; }
export PYTHONPATH="$T/site:$TN_SRC/tests/integration/python"
# The tests must exercise the installed package, not the source tree.
where=$(cd "$T" && "$py" -c 'import tenure; print(tenure.__file__)')
case $where in
"$T/site/"*) ;;
*) echo "FAIL: tenure imported from $where, not from the install" >&2; exit 1 ;;
esac
[ -f "$T/site/tenure/py.typed" ] || { echo "FAIL: py.typed not installed" >&2; exit 1; }
cd "$T"
set +e
"$py" -m pytest -p no:cacheprovider -q -rfEs \
    --rootdir "$TN_SRC/tests/integration/python" "$TN_SRC/tests/integration/python" "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "FAIL: pytest collected no tests" >&2
    exit 1
fi
exit "$rc"
