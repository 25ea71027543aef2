#!/usr/bin/env bash
# The npm tools of `make lint`, pinned in tools/openapi-lint/package-lock.json
# and installed with `npm ci` (exactly the locked versions) into
# tools/openapi-lint/node_modules, which git ignores.  Reinstalls only when
# the lock file changed since the last install.
#   scripts/npm-tools.sh           install if needed
#   scripts/npm-tools.sh js        install js/'s locked dependencies if needed
#   scripts/npm-tools.sh lint-openapi [FILE]
#                                  validate FILE (default docs/openapi.yaml)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$root/tools/openapi-lint
stamp=$dir/node_modules/.tenure-lock.sha256

command -v npm >/dev/null && command -v node >/dev/null ||
    { echo "npm-tools: node and npm are missing (Node.js >= 20.19 with npm)" >&2; exit 1; }
node -e 'const [a,b]=process.versions.node.split(".").map(Number);
    process.exit(a>20||(a===20&&b>=19)?0:1)' ||
    { echo "npm-tools: Node.js $(node --version) is too old; @redocly/cli needs >= 20.19" >&2; exit 1; }
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
if [ ! -x "$dir/node_modules/.bin/redocly" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "npm-tools: npm ci in tools/openapi-lint" >&2
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
    printf '%s\n' "$want" >"$stamp"
fi

case ${1:-} in
"") ;;
js)
    # The TypeScript client's dependencies (js/package-lock.json: TypeScript,
    # pg, better-sqlite3 12 built from source by node-gyp), the same way;
    # one install at a time (ctest runs js/test and conformance/js at once).
    jd=$root/js
    jstamp=$jd/node_modules/.tenure-lock.sha256
    jwant=$(sha256sum "$jd/package-lock.json" | cut -d' ' -f1)
    exec 9>"$jd/.npm-install.lock"
    flock 9
    if [ ! -x "$jd/node_modules/.bin/tsc" ] || [ "$(cat "$jstamp" 2>/dev/null)" != "$jwant" ]; then
        echo "npm-tools: npm ci in js (better-sqlite3 compiles: a minute or two)" >&2
        (cd "$jd" && npm ci --no-audit --no-fund --loglevel=error >&2)
        printf '%s\n' "$jwant" >"$jstamp"
    fi
    ;;
lint-openapi)
    # No telemetry, no update check: the lint must not depend on the network.
    export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
    out=$("$dir/node_modules/.bin/redocly" lint --config "$root/redocly.yaml" \
        "${2:-$root/docs/openapi.yaml}" 2>&1) && rc=0 || rc=$?
    # Drop the banner about Node 20's end of life; keep every finding.
    grep -v '[║╔╚]' <<<"$out" | sed '/^[[:space:]]*$/d' >&2
    exit "$rc"
    ;;
*) echo "usage: $0 [lint-openapi [FILE]]" >&2; exit 2 ;;
esac
