# SPDX-License-Identifier: MIT
# Sourced by go/run-tests.sh and scripts/check-go.sh: Debian's Go, offline.
# Nothing is fetched: the module in go/ imports the standard library only,
# and go/fencetest's drivers come from Debian's /usr/share/gocode through
# replace directives.  The build cache and GOPATH live in build/go (one
# cache for every preset), never in $HOME.
tn_go_env() {
    local src=$1
    TN_GO=$(command -v go || true)
    [ -n "$TN_GO" ] || TN_GO=$(ls /usr/lib/go-*/bin/go 2>/dev/null | tail -1 || true)
    if [ -z "$TN_GO" ] || [ ! -x "$TN_GO" ]; then
        echo "FAIL: no go (scripts/deps.sh installs Debian's golang-go)" >&2
        return 1
    fi
    # the tests' own "go build" (go/fencetest) finds the same Go
    PATH="$(dirname "$TN_GO"):$PATH"
    local dir=${TN_GO_DIR:-$src/build/go}
    mkdir -p "$dir/cache" "$dir/path"
    export PATH GOCACHE="$dir/cache" GOPATH="$dir/path" GOPROXY=off GOSUMDB=off
    export GOTOOLCHAIN=local GOFLAGS=-mod=readonly GOTELEMETRY=off CGO_ENABLED=1
}
