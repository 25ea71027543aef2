#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# js/run-tests.sh [unit|conformance|pack]: the TypeScript client's tests,
# with its locked dependencies (scripts/npm-tools.sh js) and the pinned tsc,
# against real tenured processes from $TN_BIN (and the PostgreSQL of
# scripts/with-pg.sh, TENURE_TEST_PG_URL, for the fences).
#   unit         node --test of js/test/*.test.ts (client, fences, frozen worker)
#   conformance  the shared scenarios of tests/conformance through the client
#   pack         npm pack: the tarball holds the compiled package, and a
#                project installs it offline and uses it
# Fails when no test ran.
set -euo pipefail
TN_SRC=${TN_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
TN_BIN=${TN_BIN:-$TN_SRC/build/dev/bin}
export TN_SRC TN_BIN
jd=$TN_SRC/js
"$TN_SRC/scripts/npm-tools.sh" js
(cd "$jd" && rm -rf dist && node_modules/.bin/tsc -p tsconfig.json)
case ${1:-unit} in
unit)
    log=$(mktemp /tmp/tenure-js.XXXXXX)
    trap 'rm -f "$log"' EXIT
    rc=0
    (cd "$jd" && node --test dist/test/*.test.js) >"$log" 2>&1 || rc=$?
    cat "$log"
    pass=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log")
    [ "$rc" = 0 ] && [ "${pass:-0}" -gt 0 ] || { echo "FAIL: js tests (exit $rc, ${pass:-0} passed)" >&2; exit 1; }
    ;;
conformance)
    . "$TN_SRC/tests/integration/lib.sh"
    . "$TN_SRC/tests/integration/lib-server.sh"
    dir=$TN_SRC/tests/conformance
    for s in acquire held renew lost release check wait events session_basic session_claim session_keepalive; do
        [ -f "$dir/$s.json" ] || fail "scenario $s.json is missing"
    done
    tn_start_server
    node "$jd/dist/test/conformance.js" "$URL" "$dir"/*.json || fail "the TypeScript client does not conform"
    pass "$(ls "$dir"/*.json | wc -l) scenarios through the TypeScript client"
    ;;
pack)
    . "$TN_SRC/tests/integration/lib.sh"
    (cd "$jd" && npm pack --silent --pack-destination "$T" >"$T/name") || fail "npm pack"
    tgz=$T/$(tail -1 "$T/name")
    tar -tzf "$tgz" | sort >"$T/list"
    for f in package/package.json package/README.md package/dist/src/index.js package/dist/src/index.d.ts \
        package/dist/src/fence.js package/dist/src/client.js; do
        grep -qx "$f" "$T/list" || fail "$f is not in $(basename "$tgz"): $(cat "$T/list")"
    done
    ! grep -E '^package/(dist/test|src|test|node_modules)/' "$T/list" || fail "the tarball holds tests or sources"
    pass "$(basename "$tgz"): $(wc -l <"$T/list") files, the compiled package and its types only"
    mkdir -p "$T/app"
    printf '{"name":"app","version":"1.0.0","private":true}\n' >"$T/app/package.json"
    (cd "$T/app" && npm install --offline --no-audit --no-fund --loglevel=error "$tgz") ||
        fail "npm install of the tarball (offline: it has no dependency)"
    tn_start_server
    out=$(cd "$T/app" && node -e '
        const { Client, fence } = require("tenure-client");
        (async () => {
          const c = new Client({ urls: [process.argv[1]] });
          const l = await c.acquire("pack:1", { ttlMs: 5000 });
          console.log(l.held, typeof fence.admitSQLite, l.token);
          await l.release();
        })().catch((e) => { console.error(String(e)); process.exit(1); });' "$URL") ||
        fail "the installed tarball: $out"
    [ "$out" = "true function 1" ] || fail "the installed tarball answered: $out"
    pass "installed offline from the tarball, it takes and releases a lease"
    ;;
*)
    echo "usage: js/run-tests.sh [unit|conformance|pack]" >&2
    exit 2
    ;;
esac
