#!/usr/bin/env bash
# Helpers for the client and CLI tests (t3xx).  Source after lib.sh.
# Times are CLOCK_MONOTONIC milliseconds, shared by every process.

TENURE="$TN_BIN/tenure"
PROBE="$TN_BIN/tn-client-probe"

mono() { "$PROBE" mono; }

# A free port below the kernel's ephemeral range: these tests open many
# client connections, and a port picked inside that range can be taken by
# one of them between the pick and tenured's bind.  Overrides lib.sh's.
tn_free_port() {
    local lo p
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range
    for _ in $(seq 1 200); do
        p=$((10000 + RANDOM % (lo - 10000)))
        ss -tanH "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return 0; }
    done
    return 1
}

# wait_grep FILE PATTERN [COUNT] [SECONDS]: wait until FILE has COUNT lines
# matching PATTERN (default 1, 10 s).
wait_grep() {
    local f=$1 pat=$2 n=${3:-1} secs=${4:-10} i
    for i in $(seq 1 $((secs * 50))); do
        [ "$(grep -c -- "$pat" "$f" 2>/dev/null || true)" -ge "$n" ] && return 0
        sleep 0.02
    done
    return 1
}

# wait_exit PID SECONDS: wait for a child of this shell to exit; sets RC.
wait_exit() {
    local pid=$1 secs=${2:-10} i
    for i in $(seq 1 $((secs * 50))); do
        if ! kill -0 "$pid" 2>/dev/null; then
            RC=0; wait "$pid" || RC=$?
            return 0
        fi
        sleep 0.02
    done
    return 1
}

# kv LINE KEY: the value of KEY=value in a probe line.
kv() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }

# expect_exit WANT DESC CMD...: run CMD, compare its exit status.
expect_exit() {
    local want=$1 desc=$2 rc=0
    shift 2
    "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" = "$want" ] || fail "$desc: expected exit $want, got $rc: $(cat "$T/out" "$T/err")"
}

# A closed loopback port: connections are refused.
closed_port() {
    local p
    p=$(tn_free_port)
    echo "$p"
}

# gone PID: true when PID has exited (a zombie waiting to be reaped counts
# as exited), polling up to 2 s for a SIGKILL to be delivered.
gone() {
    local pid=$1 i st
    for i in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || return 0
        st=$(sed -n 's/^[0-9]* ([^)]*) \(.\).*/\1/p' "/proc/$pid/stat" 2>/dev/null || true)
        [ "$st" = Z ] && return 0
        sleep 0.02
    done
    return 1
}

# Background tenure/probe processes of a test: killed on exit even when
# the test fails half-way, together with the process group of the command
# whose pid a test wrote to $T/pid (tenure run puts it in its own group).
TN_CLIENT_PIDS=()
tn_client_cleanup() {
    local p
    for p in "${TN_CLIENT_PIDS[@]:-}"; do
        [ -n "$p" ] || continue
        kill -CONT "$p" 2>/dev/null || true
        kill -9 "$p" 2>/dev/null || true
    done
    if [ -s "$T/pid" ]; then
        kill -9 -- "-$(cat "$T/pid")" 2>/dev/null || true
    fi
    tn_cleanup
}
trap tn_client_cleanup EXIT

# need_sessions: exit 77 (skipped), saying why, when the server at $URL has
# no sessions yet (POST /v1/sessions answers 501, or 404/405 where the
# routes do not exist); the probe session it opens is ended at once.
need_sessions() {
    req POST /v1/sessions '{"owner_id":"probe","ttl_ms":1000}'
    case $CODE in
        201)
            local id secret
            id=$(jget session_id)
            secret=$(jget session_secret)
            req DELETE "/v1/sessions/$id" "{\"session_secret\":\"$secret\"}"
            ;;
        404 | 405 | 501)
            echo "skip: the server has no sessions (POST /v1/sessions answered $CODE)"
            exit 77
            ;;
        *) fail "POST /v1/sessions: HTTP $CODE: $BODY" ;;
    esac
}
