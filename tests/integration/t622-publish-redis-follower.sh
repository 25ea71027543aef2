#!/usr/bin/env bash
# libtenure following the Redis stream tenured --publish fills (events_url)
# instead of the SSE stream: a holder learns of a force release in well
# under its renew timer (the latency from the event's logging to the
# holder's callback is printed; the 100 ms goal is measured by
# bench/publish.sh, not asserted here, since a busy machine must not fail
# a test), and the SSE follower's reset rule holds: a reset
# record, or a jump in the events' ids, makes it renew every kept lease at
# once, and so find a loss it never heard of.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-publish.sh"

pub_start_redis
S=tenure:events
EV="redis://127.0.0.1:$REDIS_PORT/$S"
tn_start_server --publish "$EV"
TTL=30000 # the renew timer is 10 s away

# start NAME: the holder in the background, output in $T/NAME.
start() {
    "$TN_BIN/tn-ev-loss" "$URL" "$1" "$TTL" "$EV" >"$T/$1" 2>&1 &
    PROBE=$!
    TN_PIDS+=("$PROBE")
    for _ in $(seq 1 200); do
        grep -q '^acquired' "$T/$1" && break
        sleep 0.05
    done
    grep -q '^acquired' "$T/$1" || fail "tn-ev-loss did not acquire: $(cat "$T/$1")"
    sleep 0.5 # its follower has found where the stream ends
}

lat=()
for i in 1 2 3 4 5; do
    start "fr:$i"
    curl -s -o /dev/null -X DELETE "$URL/v1/leases/fr:$i?force=true"
    wait "$PROBE" || fail "tn-ev-loss: $(cat "$T/fr:$i")"
    set -- $(sed -n 2p "$T/fr:$i")
    [ "$1" = lost ] || fail "the holder never learned of the force release: $(cat "$T/fr:$i")"
    at=$(pub_dump "$S" | awk -v n="fr:$i" '$2 == "revoked" && $3 == n {print $1; exit}')
    at_ms=$(rcli XRANGE "$S" - + | awk -v id="$at" 'p && $0 == "at_ms" {getline; print; exit} $0 == "id" {getline; p = ($0 == id)}')
    [ -n "$at_ms" ] || fail "no revoked event for fr:$i in the stream"
    lat+=($(($4 - at_ms)))
    [ "${lat[-1]}" -lt 2000 ] || fail "the loss took ${lat[-1]} ms through the Redis stream (renew timer: 10 s)"
done
pass "force release heard through the Redis stream ${lat[*]} ms after tenured logged it"

# The reset rule (a 60 s TTL: the renew timer is 20 s away, far beyond
# any restart below): revoke with the publisher off (no event reaches the
# stream), then a reset record, as the publisher sends after an overflow.
TTL=60000
start rs:1
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
tn_start_server
curl -s -o /dev/null -X DELETE "$URL/v1/leases/rs:1?force=true"
sleep 0.5
[ "$(sed -n 2p "$T/rs:1")" = "" ] || fail "the holder learned of an unpublished revoke: $(cat "$T/rs:1")"
last=$(rcli XREVRANGE "$S" + - COUNT 1 | sed -n 3p)
t0=$(date +%s%3N)
rcli XADD "$S" '*' id $((last + 1)) type reset name '' owner_id '' token 0 floor 0 at_ms 0 >/dev/null
wait "$PROBE" || fail "tn-ev-loss: $(cat "$T/rs:1")"
set -- $(sed -n 2p "$T/rs:1")
[ "$1" = lost ] && [ $(($4 - t0)) -lt 5000 ] || fail "a reset record did not make the holder renew at once: $(cat "$T/rs:1" | tr '\n' ' ')"
pass "a reset record on the stream made the holder renew at once and find the loss ($(($4 - t0)) ms after the reset; its renew timer was 20 s away)"

# The same through a jump in ids (the stream was trimmed past the holder).
start gp:1
curl -s -o /dev/null -X DELETE "$URL/v1/leases/gp:1?force=true"
sleep 0.5
[ "$(sed -n 2p "$T/gp:1")" = "" ] || fail "the holder learned of an unpublished revoke: $(cat "$T/gp:1")"
t0=$(date +%s%3N)
rcli XADD "$S" '*' id $((last + 10)) type acquired name other owner_id x token 999 floor 999 at_ms 0 >/dev/null
wait "$PROBE" || fail "tn-ev-loss: $(cat "$T/gp:1")"
set -- $(sed -n 2p "$T/gp:1")
[ "$1" = lost ] && [ $(($4 - t0)) -lt 5000 ] || fail "a jump in event ids did not make the holder renew at once: $(cat "$T/gp:1" | tr '\n' ' ')"
pass "a jump in the stream's event ids made the holder renew at once and find the loss ($(($4 - t0)) ms after it)"
