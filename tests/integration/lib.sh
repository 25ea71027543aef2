#!/usr/bin/env bash
# Shared helpers for the integration tests.  Source it first:
#   . "$(dirname "$0")/lib.sh"
# Each test gets its own temp dir ($T), and every process started through
# these helpers is killed on exit.  TN_BIN names the build's bin/ folder.
set -euo pipefail

TN_SRC=${TN_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TN_BIN=${TN_BIN:-$TN_SRC/build/dev/bin}
T=$(mktemp -d /tmp/tenure-it.XXXXXX)
TN_PIDS=()

tn_cleanup() {
    local p bad=0
    for p in "${TN_PIDS[@]:-}"; do
        [ -n "$p" ] || continue
        kill -CONT "$p" 2>/dev/null || true
        kill -9 "$p" 2>/dev/null || true
    done
    tn_server_kill_all
    wait 2>/dev/null || true
    # A sanitizer build's report in a server's log is a failure, even
    # when the test did not look at how that server ended.
    local reports
    reports=$(tn_server_sanitizer_reports)
    if [ -n "$reports" ]; then
        echo "FAIL: sanitizer reports in the server logs ($T kept):" >&2
        echo "$reports" >&2
        TN_KEEP=1 bad=1
    fi
    # The answers recorded by rq (lib-server.sh) must be as
    # docs/openapi.yaml describes them; one process checks them all.
    if [ -d "$T/openapi" ] && [ "${TN_OPENAPI_CHECK:-1}" = 1 ]; then
        ${TN_PYTHON3:-/usr/bin/python3} "$TN_SRC/tests/tools/openapi_check.py" \
            --log "$T/openapi" || bad=1
    fi
    if [ "${TN_KEEP:-0}" = 1 ]; then echo "kept $T" >&2; else rm -rf "$T"; fi
    [ "$bad" = 0 ] || exit 1
}
trap tn_cleanup EXIT

fail() { echo "FAIL: $*" >&2; [ -f "$T/tenured.log" ] && tail -20 "$T/tenured.log" >&2; exit 1; }
pass() { echo "ok - $*"; }

# The launcher (lib-tenured.sh): tn_free_port, tn_server_* for tests
# that run several instances.  The helpers below drive the test's main
# instance, with its data in $T/data (or TN_DATA_DIR) and its log in
# $T/tenured.log.
TN_SERVER_WORK=$T
. "$TN_SRC/tests/integration/lib-tenured.sh"

# tn_use_store STORE: run this test's servers on STORE, "embedded" (the
# default) or "pg" (a schema of its own in TENURE_TEST_PG_URL; skips, 77,
# only when that is unset).  For the scripts ctest runs once per store
# (tests/integration/CMakeLists.txt, "# stores:"); sets STORE, and PG_URL
# on PostgreSQL.
tn_use_store() {
    STORE=${1:-embedded}
    case $STORE in
    embedded) TN_SERVER_STORE= ;;
    pg)
        . "$TN_SRC/tests/integration/lib-pg.sh"
        pg_need
        pg_fresh_schema "$(basename "$0" .sh | tr -c 'a-z0-9\n' _ | cut -c1-40)_$$"
        TN_SERVER_STORE=$PG_URL
        ;;
    *) fail "unknown store '$STORE' (embedded or pg)" ;;
    esac
}

# tn_start_server [extra tenured args...]: start the main tenured, on PORT
# when it was set (a restart keeps it), with data in $T/data (or
# TN_DATA_DIR); sets PORT, URL, SERVER_PID.
tn_start_server() {
    local pick=-p
    # lib-server.sh's pick is a first choice: another one when taken.
    [ -z "${TN_SRV_PORT[main]:-}" ] && [ "${PORT:-}" = "${TN_PORT_PICKED:-}" ] && pick=-P
    tn_server_start -i main -d "${TN_DATA_DIR:-$T/data}" -l "$T/tenured.log" \
        ${PORT:+$pick "$PORT"} -- "$@" || fail "$TN_SERVER_ERR"
    tn_main_vars
}
tn_main_vars() {
    PORT=${TN_SRV_PORT[main]} URL=${TN_SRV_URL[main]} SERVER_PID=${TN_SRV_PID[main]}
}

# tn_wait_ready URL [seconds]: poll /readyz until 200 (for a server the
# test started itself; 1 when SERVER_PID exited).
tn_wait_ready() {
    local url=$1 secs=${2:-20} i
    for i in $(seq 1 $((secs * 20))); do
        [ "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$url/readyz" 2>/dev/null)" = 200 ] && return 0
        if [ -n "${SERVER_PID:-}" ] && ! kill -0 "$SERVER_PID" 2>/dev/null; then
            return 1 # the server exited
        fi
        sleep 0.05
    done
    return 1
}

# The tests that build a copy of the tree (the negative controls' planted
# trees, the recipes' tree) keep it as NAME/src beside NAME/build in the
# folder of the presets' builds (ROOT, build/), with the dev preset's
# flags.  tn_copy_cmake ROOT ARGS...: cmake for such a copy; with ccache
# (scripts/deps.sh) every copy shares one compiler cache, ROOT/ccache:
# paths relative to ROOT and the build folder left out of the hash make a
# file no copy changes compile once for all of them.  TN_NICE: its nice.
tn_copy_cmake() {
    local root=$1 launcher=()
    shift
    if command -v ccache >/dev/null; then
        [ "${1:-}" = --build ] || launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
        CCACHE_DIR=$root/ccache CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1 \
            nice -n "${TN_NICE:-0}" cmake "$@" "${launcher[@]}"
    else
        nice -n "${TN_NICE:-0}" cmake "$@"
    fi
}
TN_COPY_FLAGS=(-DCMAKE_BUILD_TYPE=Debug -DTN_WERROR=ON "-DCMAKE_C_FLAGS=-O1 -g")

# tn_wait_metric NAME VALUE WHAT: wait (bounded, 10 s) until the metric
# NAME of the server at $URL reads VALUE, so that a test acts only once
# the server is in the state it needs, however slow the machine; WHAT
# names that state in the failure.
tn_wait_metric() {
    local i
    for i in $(seq 1 500); do
        [ "$(curl -s --max-time 2 "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}')" = "$2" ] &&
            return 0
        sleep 0.02
    done
    fail "the server never had $3"
}

# tn_wait_subscribers N: until N event streams are open.
tn_wait_subscribers() { tn_wait_metric tenure_event_subscribers "$1" "$1 event subscribers"; }

tn_kill_server() {
    tn_server_kill main
    kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
}

# req METHOD PATH [BODY] [extra curl args...]: sets CODE and BODY.
req() {
    local method=$1 path=$2 data=${3:-}
    shift 3 2>/dev/null || shift $#
    local out
    if [ -n "$data" ]; then
        out=$(curl -s -X "$method" -H 'Content-Type: application/json' \
            --data-binary "$data" -w '\n%{http_code}' "$@" "$URL$path")
    else
        out=$(curl -s -X "$method" -w '\n%{http_code}' "$@" "$URL$path")
    fi
    CODE=${out##*$'\n'}
    BODY=${out%$'\n'*}
    [ "$BODY" != "$CODE" ] || BODY=""
}

# jget FIELD: print a top-level field of $BODY (jq-like, via python-free sed
# is too fragile, so use the jansson-based helper when built, else grep).
jget() { printf '%s' "$BODY" | "$TN_BIN/tn-json-get" "$1"; }

expect_code() { [ "$CODE" = "$1" ] || fail "${2:-request}: expected HTTP $1, got $CODE: $BODY"; }
expect_field() { local v; v=$(jget "$1"); [ "$v" = "$2" ] || fail "${3:-field}: expected $1=$2, got '$v' in $BODY"; }
