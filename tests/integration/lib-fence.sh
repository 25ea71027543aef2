#!/usr/bin/env bash
# Helpers for the fence (t4xx) and kafka (t5xx) tests.  Source after lib.sh.
# fence_start_mock TOPIC:PARTS...   start the mock cluster; sets BROKERS
# fence_mat ARGS...                  run tenure-materializer in the foreground
# fence_mat_bg LOG ARGS...           ... in the background; sets MAT_PID
# fence_dump SINK                    canonical dump of the four sink tables
# fence_sql SINK SQL                 one query, '|'-separated rows

# Processes started here are tracked in FENCE_PIDS and killed on exit
# (quietly: many have exited by then), before lib.sh's own cleanup.
FENCE_PIDS=()
fence_track() { FENCE_PIDS+=("$1"); }
fence_cleanup() {
    local p
    for p in "${FENCE_PIDS[@]:-}"; do
        [ -n "$p" ] || continue
        kill -CONT "$p" 2>/dev/null || true
        kill -9 "$p" 2>/dev/null || true
    done
}
trap 'fence_cleanup; tn_cleanup' EXIT

# fence_start_server [tenured args...]: tn_start_server on a new free
# port each time (lib-tenured.sh picks another one when the port was
# taken meanwhile: parallel tests and the mock cluster bind ports too).
# Sets PORT, URL, SERVER_PID.
fence_start_server() {
    PORT=
    tn_start_server "$@"
}

fence_start_mock() {
    "$TN_BIN/tn-kafka-mock" "$@" >"$T/mock.out" 2>"$T/mock.err" &
    MOCK_PID=$!
    fence_track "$MOCK_PID"
    local i
    for i in $(seq 1 100); do
        [ -s "$T/mock.out" ] && break
        sleep 0.05
    done
    BROKERS=$(head -1 "$T/mock.out")
    [ -n "$BROKERS" ] || fail "mock cluster did not start: $(cat "$T/mock.err")"
}

fence_mat() { "$TN_BIN/tenure-materializer" --brokers "$BROKERS" "$@"; }
# fence_mat_bg LOG ARGS...: start it in the background (stderr to LOG);
# sets MAT_PID to the materializer's own pid (not a subshell's).
fence_mat_bg() {
    local log=$1
    shift
    "$TN_BIN/tenure-materializer" --brokers "$BROKERS" "$@" 2>>"$log" &
    MAT_PID=$!
    fence_track "$MAT_PID"
}

# A fresh PostgreSQL database for this test, from TENURE_TEST_PG_URL: sets
# PG_SINK.  Fails (never skips) when the variable is set but unreachable.
fence_pg_db() {
    local name="tn_fence_$1_$$"
    psql "$TENURE_TEST_PG_URL" -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE $name" >/dev/null \
        || fail "TENURE_TEST_PG_URL is set but PostgreSQL is unreachable"
    PG_SINK="${TENURE_TEST_PG_URL%/*}/$name"
}

fence_sql() {
    local sink=$1 sql=$2
    case $sink in
        sqlite:*) sqlite3 -separator '|' "${sink#sqlite:}" "$sql" ;;
        postgres*) psql "$sink" -At -F '|' -c "$sql" ;;
        *) fail "unknown sink $sink" ;;
    esac
}

fence_dump() {
    local sink=$1 hex collate=''
    case $sink in
        sqlite:*) hex() { echo "lower(hex($1))"; } ;;
        *) hex() { echo "encode($1, 'hex')"; }; collate=' COLLATE "C"' ;;
    esac
    fence_sql "$sink" "SELECT 'fence', resource, hwm FROM tenure_fence ORDER BY resource$collate"
    fence_sql "$sink" "SELECT 'offsets', topic, \"partition\", next_offset FROM tenure_offsets ORDER BY topic$collate, 3"
    fence_sql "$sink" "SELECT 'admitted', topic, \"partition\", \"offset\", resource, token, $(hex key), $(hex value), claim FROM tenure_admitted ORDER BY topic$collate, 3, 4"
    fence_sql "$sink" "SELECT 'rejected', topic, \"partition\", \"offset\", resource, token, reason FROM tenure_rejected ORDER BY topic$collate, 3, 4"
}

# Sum of committed next offsets of a topic in a sink (0 when none yet).
fence_committed() {
    local v
    v=$(fence_sql "$1" "SELECT COALESCE(SUM(next_offset), 0) FROM tenure_offsets WHERE topic='$2'" 2>/dev/null || true)
    echo "${v:-0}"
}

# fence_wait_committed SINK TOPIC N [secs]: until N records are committed.
fence_wait_committed() {
    local i
    for i in $(seq 1 $((${4:-30} * 20))); do
        [ "$(fence_committed "$1" "$2")" -ge "$3" ] && return 0
        sleep 0.05
    done
    return 1
}
