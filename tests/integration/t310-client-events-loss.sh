#!/usr/bin/env bash
# The client following the event stream reports the loss of a kept lease
# as soon as an admin force-releases it, long before its renew timer (a
# third of a 30 s TTL) would have found out; without the stream the same
# loss is found only by the renew.  Safety never rests on the stream: the
# keepalive tests (t301, t302) run without it.
. "$(dirname "$0")/lib.sh"
tn_start_server
TTL=30000

# start NAME WATCH: run the probe in the background, output in $T/NAME.
start() {
    "$TN_BIN/tn-ev-loss" "$URL" "$1" "$TTL" "$2" >"$T/$1" 2>&1 &
    PROBE=$!
    TN_PIDS+=("$PROBE")
    for _ in $(seq 1 100); do
        grep -q '^acquired' "$T/$1" && return 0
        sleep 0.05
    done
    fail "tn-ev-loss did not acquire: $(cat "$T/$1")"
}

start ev:with 1
sleep 0.3
curl -s -o /dev/null -X DELETE "$URL/v1/leases/ev:with?force=true"
wait "$PROBE" || fail "tn-ev-loss failed: $(cat "$T/ev:with")"
set -- $(sed -n 2p "$T/ev:with")
[ "$1" = lost ] || fail "with events: $(cat "$T/ev:with")"
[ "$2" -lt 3000 ] || fail "with events the loss took $2 ms"
pass "with the event stream, the revoked lease was reported lost after $2 ms"

# Without the stream the client learns it at its next renew (~TTL/3), so
# 3 s later it still believes it holds the lease (its safe time is left).
start ev:without 0
sleep 0.3
curl -s -o /dev/null -X DELETE "$URL/v1/leases/ev:without?force=true"
sleep 3
[ "$(sed -n 2p "$T/ev:without")" = "" ] ||
    fail "without events the loss was reported within 3 s: $(cat "$T/ev:without")"
kill "$PROBE" 2>/dev/null || true
pass "without the stream, the same loss waits for the renew timer"
