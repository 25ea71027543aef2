#!/usr/bin/env bash
# The lint checks fail when they should: scripts/check-includes.py on a
# copy of the tree with an upward include, then with an include cycle
# inside one folder, a cycle of two modules that no two files make (a.c
# calls b.c, b.c takes a type from a.h), a Python import cycle, and one
# whose back edge is an import inside a function (and passes with a new
# fence_NAME.h, which needs no line in its table); scripts/check-length.sh
# on a small repository with a file of src/ one line past the cap (and
# with its reason given, listed, listed once short again);
# scripts/check-exports.sh on a libtenure.so that exports one function no
# header declares.
#
#   tests/lint/lint-negative.sh LIBDIR    (the ctest lint/negative)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIBDIR=${1:?usage: lint-negative.sh LIBDIR}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
py=/usr/bin/python3
[ -x "$py" ] || py=python3

# A copy check-includes.py can run on (it finds the tree from its own path).
tree() {
    rm -rf "$T/tree"
    mkdir -p "$T/tree/scripts"
    cp -r "$ROOT/src" "$ROOT/include" "$ROOT/python" "$T/tree/"
    cp "$ROOT/scripts/check-includes.py" "$ROOT/scripts/include-allow.txt" \
        "$T/tree/scripts/"
}
includes() { "$py" "$T/tree/scripts/check-includes.py" >"$T/out" 2>&1; }
expect() { # expect WHAT RC PATTERN
    local what=$1 want=$2 pattern=$3 rc=0
    includes || rc=$?
    if [ "$rc" -ne "$want" ] || ! grep -q -- "$pattern" "$T/out"; then
        echo "FAIL $what: check-includes exit $rc (want $want), output:" >&2
        cat "$T/out" >&2
        fail=1
    else
        echo "ok   $what"
    fi
}

tree
expect "the tree as it is passes" 0 "no new cycle"

tree # common is the bottom layer: it may not include the API
printf '#include "api/api_int.h"\n' >>"$T/tree/src/common/buf.h"
expect "an upward include fails" 1 "common may not reach api"

tree # a cycle inside one folder
printf '#ifndef A_H\n#define A_H\n#include "common/cyc_b.h"\n#endif\n' \
    >"$T/tree/src/common/cyc_a.h"
printf '#ifndef B_H\n#define B_H\n#include "common/cyc_a.h"\n#endif\n' \
    >"$T/tree/src/common/cyc_b.h"
expect "an include cycle fails" 1 "cycle"

tree # modules: a.c calls b.c, b.c takes its type from a.h (as lease.c and
# table.c once did): no cycle of files, a cycle of modules
printf '#ifndef A_H\n#define A_H\nstruct cyc_t { int x; };\nint cyc_a(void);\n#endif\n' \
    >"$T/tree/src/common/cyc_a.h"
printf '#include "common/cyc_a.h"\n#include "common/cyc_b.h"\n%s\n' \
    'int cyc_a(void) { return cyc_b(); }' >"$T/tree/src/common/cyc_a.c"
printf '#ifndef B_H\n#define B_H\nint cyc_b(void);\n#endif\n' \
    >"$T/tree/src/common/cyc_b.h"
printf '#include "common/cyc_b.h"\n#include "common/cyc_a.h"\n%s\n' \
    'int cyc_b(void) { struct cyc_t t = {0}; return t.x; }' \
    >"$T/tree/src/common/cyc_b.c"
expect "a cycle of two modules fails" 1 "module cycle: src/common/cyc_a"

tree # a Python import cycle: the errors module importing the client
printf 'from .client import Client  # noqa\n' >>"$T/tree/python/tenure/errors.py"
expect "a Python import cycle fails" 1 "import cycle: .*client.py"

tree # the same, deferred into a function: still both ways
printf 'def _late():\n    from . import client\n    return client\n' \
    >>"$T/tree/python/tenure/_http.py"
expect "a Python import cycle inside a function fails" 1 "import cycle:"

tree # a new fence backend's public header belongs to fence by its name
printf '#include <tenure/fence.h>\n' >"$T/tree/include/tenure/fence_x.h"
printf '#include <tenure/fence_x.h>\n' >"$T/tree/src/fence/x.c"
expect "a new fence_NAME.h passes" 0 "no new cycle"

# check-length in a repository of its own (it reads what git tracks).
L="$T/len"
mkdir -p "$L/scripts" "$L/src"
cp "$ROOT/scripts/check-length.sh" "$L/scripts/"
grep '^#' "$ROOT/scripts/length-allow.txt" >"$L/scripts/length-allow.txt"
length() { # length WHAT RC PATTERN
    local what=$1 want=$2 pattern=$3 rc=0
    git -C "$L" add -A >/dev/null
    bash "$L/scripts/check-length.sh" >"$T/out" 2>&1 || rc=$?
    if [ "$rc" -ne "$want" ] ||
        { [ -n "$pattern" ] && ! grep -q -- "$pattern" "$T/out"; }; then
        echo "FAIL $what: check-length exit $rc (want $want), output:" >&2
        cat "$T/out" >&2
        fail=1
    else
        echo "ok   $what"
    fi
}
git -C "$L" init -q
seq 500 | sed 's|^|/* line |; s|$| */|' >"$L/src/x.c"
length "a file of src/ at the cap passes" 0 ""
echo '/* one more */' >>"$L/src/x.c"
length "a file of src/ past the cap fails" 1 "src/x.c has 501 lines"
{ echo '/* One file: the reason it stays whole. */'; cat "$L/src/x.c"; } \
    >"$L/x" && mv "$L/x" "$L/src/x.c"
length "one that says why it is one file passes" 0 ""
sed -i 1d "$L/src/x.c"
echo src/x.c >>"$L/scripts/length-allow.txt"
length "one still listed as being split passes" 0 ""
sed -i '$d' "$L/src/x.c"
length "a listed file back under the cap fails" 1 "remove it from"

# check-exports on libtenure.so's own objects plus one undeclared export.
mkdir -p "$T/lib"
cp "$LIBDIR"/libtenure-*.so "$T/lib/" 2>/dev/null || true
printf '__attribute__((visibility("default"))) int tn_undeclared(void);\n%s\n' \
    'int tn_undeclared(void) { return 0; }' >"$T/leak.c"
cc -fPIC -c -o "$T/leak.o" "$T/leak.c"
cc -shared -o "$T/lib/libtenure.so" -Wl,--whole-archive "$LIBDIR/libtenure.a" \
    -Wl,--no-whole-archive "$T/leak.o"
cc -shared -o "$T/control.so" -Wl,--whole-archive "$LIBDIR/libtenure.a" \
    -Wl,--no-whole-archive
mkdir -p "$T/control"
cp "$T/lib"/libtenure-*.so "$T/control/" 2>/dev/null || true
mv "$T/control.so" "$T/control/libtenure.so"
if ! bash "$ROOT/scripts/check-exports.sh" "$T/control" >"$T/out" 2>&1; then
    echo "FAIL control: the same objects without the extra export fail:" >&2
    cat "$T/out" >&2
    fail=1
fi
rc=0
bash "$ROOT/scripts/check-exports.sh" "$T/lib" >"$T/out" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] || ! grep -q tn_undeclared "$T/out"; then
    echo "FAIL an undeclared export fails: check-exports exit $rc, output:" >&2
    cat "$T/out" >&2
    fail=1
else
    echo "ok   an undeclared export fails"
fi
exit $fail
