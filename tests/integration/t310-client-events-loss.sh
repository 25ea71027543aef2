#!/usr/bin/env bash
# The client following the event stream reports the loss of a kept lease
# as soon as an admin force-releases it, long before its renew timer (a
# third of a 30 s TTL) would have found out; without the stream the same
# loss is found only by the renew.  A reset on the stream (events may
# have been missed: here the server restarted while the client was frozen,
# and the lease was revoked before the client came back) makes the client
# renew at once, and so find the loss.  Safety never rests on the stream: the
# keepalive tests (t301, t302) run without it.  On the embedded store,
# and on the PostgreSQL store when TENURE_TEST_PG_URL is set (the event
# then travels through NOTIFY and the instance's LISTEN connection).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
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

# one_store: the two cases against the server at $URL.
one_store() {
    start ev:with:$STORE 1
    sleep 0.3
    curl -s -o /dev/null -X DELETE "$URL/v1/leases/ev:with:$STORE?force=true"
    wait "$PROBE" || fail "tn-ev-loss failed: $(cat "$T/ev:with:$STORE")"
    set -- $(sed -n 2p "$T/ev:with:$STORE")
    [ "$1" = lost ] || fail "with events: $(cat "$T/ev:with:$STORE")"
    [ "$2" -lt 3000 ] || fail "with events the loss took $2 ms"
    pass "$STORE: with the event stream, the revoked lease was reported lost after $2 ms"

    # Without the stream the client learns it at its next renew (~TTL/3), so
    # 3 s later it still believes it holds the lease (its safe time is left).
    start ev:without:$STORE 0
    sleep 0.3
    curl -s -o /dev/null -X DELETE "$URL/v1/leases/ev:without:$STORE?force=true"
    sleep 3
    [ "$(sed -n 2p "$T/ev:without:$STORE")" = "" ] ||
        fail "without events the loss was reported within 3 s: $(cat "$T/ev:without:$STORE")"
    kill "$PROBE" 2>/dev/null || true
    pass "$STORE: without the stream, the same loss waits for the renew timer"
}

STORE=embedded
tn_start_server
one_store

# The reset: freeze the client, restart the server (event ids start anew),
# revoke the lease, thaw the client.  Its stream reconnects with an id the
# new process never issued, gets a reset, and the client renews now; its
# renew timer (TTL/3 = 20 s after the grant, with this case's 60 s TTL) is
# far off.
TTL=60000
start ev:reset 1
tn_wait_subscribers 1
kill -STOP "$PROBE"
tn_restart_server KILL
curl -s -o /dev/null -w '%{http_code}' -X DELETE "$URL/v1/leases/ev:reset?force=true" >"$T/rev"
[ "$(cat "$T/rev")" = 204 ] || fail "force release after the restart: $(cat "$T/rev")"
kill -CONT "$PROBE"
t0=$(now_ms)
for _ in $(seq 1 100); do
    [ -n "$(sed -n 2p "$T/ev:reset")" ] && break
    sleep 0.05
done
set -- $(sed -n 2p "$T/ev:reset")
[ "${1:-}" = lost ] || fail "after a reset the loss was not reported within 5 s: $(cat "$T/ev:reset")"
[ "$2" -lt 15000 ] || fail "the loss after the reset took $2 ms from the grant (the renew timer is at 20 s)"
wait "$PROBE" || true
pass "embedded: a reset on the stream made the client renew at once and find the loss ($(($(now_ms) - t0)) ms after thawing)"
TTL=30000
if [ -n "${TENURE_TEST_PG_URL:-}" ]; then
    pg_need
    tn_kill_server
    pg_fresh_schema t310
    STORE=postgresql
    tn_start_server --store "$PG_URL"
    one_store
fi
