#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# go/run-tests.sh [unit|conformance]: the Go module's tests, offline, with
# Debian's Go, against real tenured processes from $TN_BIN (and the
# PostgreSQL of scripts/with-pg.sh, TENURE_TEST_PG_URL, for the fence).
#   unit         go vet and go test of go/ (but the conformance runner) and
#                of go/fencetest (SQLite and PostgreSQL fences, the frozen
#                holder)
#   conformance  the shared scenarios of tests/conformance (go test
#                ./internal/conformance)
# TN_GO_RACE=1 adds the race detector.  Fails when no test ran.
set -euo pipefail
TN_SRC=${TN_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
TN_BIN=${TN_BIN:-$TN_SRC/build/dev/bin}
export TN_SRC TN_BIN
. "$TN_SRC/go/env.sh"
tn_go_env "$TN_SRC"
mode=${1:-unit}

# gotest DIR ARGS...: go test -v in DIR; prints the summary lines and,
# on failure, the whole output; fails when nothing passed.
gotest() {
    local dir=$1 log
    shift
    log=$(mktemp /tmp/tenure-go.XXXXXX)
    set +e
    (cd "$dir" && "$TN_GO" test ${TN_GO_RACE:+-race} -count=1 -v "$@") >"$log" 2>&1
    local rc=$?
    set -e
    if [ "$rc" -ne 0 ]; then
        cat "$log" >&2
    else
        grep -E '^(ok|FAIL|---)' "$log" || true
    fi
    local passed
    passed=$(grep -c -- '--- PASS' "$log" || true)
    rm -f "$log"
    [ "$rc" -eq 0 ] || return "$rc"
    [ "$passed" -gt 0 ] || { echo "FAIL: no Go test ran in $dir" >&2; return 1; }
    echo "go: $passed passed in ${dir#"$TN_SRC"/}"
}

case $mode in
unit)
    (cd "$TN_SRC/go" && "$TN_GO" vet ./...)
    (cd "$TN_SRC/go/fencetest" && "$TN_GO" vet -tags libsqlite3 ./...)
    # shellcheck disable=SC2046 # one argument per package
    gotest "$TN_SRC/go" $(cd "$TN_SRC/go" && "$TN_GO" list ./... | grep -v '/internal/conformance$')
    gotest "$TN_SRC/go/fencetest" -tags libsqlite3 ./...
    ;;
conformance)
    gotest "$TN_SRC/go" ./internal/conformance
    ;;
*)
    echo "usage: go/run-tests.sh [unit|conformance]" >&2
    exit 2
    ;;
esac
