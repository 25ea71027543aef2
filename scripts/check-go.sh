#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make lint for the Go code: gofmt has nothing to change and go vet finds
# nothing, in go/ and in go/fencetest (offline, Debian's Go: go/env.sh).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
. "$src/go/env.sh"
tn_go_env "$src"
unformatted=$("$(dirname "$TN_GO")/gofmt" -l "$src/go")
if [ -n "$unformatted" ]; then
    echo "check-go: gofmt would change (run gofmt -w):" >&2
    echo "$unformatted" >&2
    exit 1
fi
(cd "$src/go" && "$TN_GO" vet ./...)
(cd "$src/go/fencetest" && "$TN_GO" vet -tags libsqlite3 ./...)
