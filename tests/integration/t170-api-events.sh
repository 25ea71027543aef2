#!/usr/bin/env bash
# GET /v1/events: acquired, released, expired and revoked events in order
# with increasing ids, the prefix filter, resumption with Last-Event-ID
# from the backlog (also from the id a stream starts with, before any
# event), a reset event when the id is older than the backlog,
# and a slow consumer cut instead of buffered without bound.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools

# events_of FILE FIELD...: each event's FIELDs joined by ':', then a space.
events_of() {
    local file=$1 line f sep
    shift
    grep '^data: ' "$file" | sed 's/^data: //' |
        while read -r line; do
            sep=
            for f in "$@"; do
                printf '%s%s' "$sep" "$(printf '%s' "$line" | "$TN_BIN/tn-json-get" "$f")"
                sep=:
            done
            printf ' '
        done
}
tn_start_server --event-backlog 8 --event-buffer-bytes 2048 --event-heartbeat-ms 200

curl -sN --max-time 4 "$URL/v1/events?prefix=ev:" >"$T/stream" &
spid=$!
tn_wait_subscribers 1
acquire "ev:1" a 200
expect_code 201 "acquire ev:1"
acquire "zz:1" a 5000 # another prefix: never in the stream
sleep 0.5             # ev:1 expires
acquire "ev:1" b 5000
tok=$(jget token)
sec=$(jget lease_secret)
release "ev:1" "$tok" "$sec"
expect_code 204 "release"
acquire "ev:1" c 5000
rq DELETE "/v1/leases/ev:1?force=true" -
expect_code 204 "force release"
wait "$spid" || true
got=$(events_of "$T/stream" type owner_id)
[ "$got" = "acquired:a expired:a acquired:b released:b acquired:c revoked:c " ] ||
    fail "event sequence: '$got' in $(cat "$T/stream")"
ids=$(sed -n 's/^id: //p' "$T/stream" | tr '\n' ' ')
prev=0
for i in $ids; do
    [ "$i" -gt "$prev" ] || fail "ids not increasing: $ids"
    prev=$i
done
grep -q '"name":"zz:1"' "$T/stream" && fail "prefix filter let zz:1 through"
grep -q '^: heartbeat' "$T/stream" || fail "no heartbeat comment in the stream"
pass "events in order with increasing ids, prefix filter, heartbeats"

# A stream opened without Last-Event-ID starts with an id and no data: the
# point it starts from.  Resuming from it replays every event since.
start=$(sed -n '/^id: /{s/^id: //p;q}' "$T/stream")
[ "$(grep -A1 "^id: $start\$" "$T/stream" | sed -n 2p)" = "" ] ||
    fail "the starting id $start carries data: $(cat "$T/stream")"
curl -sN --max-time 1 -H "Last-Event-ID: $start" "$URL/v1/events?prefix=ev:" >"$T/fromstart" || true
n=$(grep -c '^data: ' "$T/fromstart" || true)
[ "$n" = 6 ] || fail "resume from the starting id $start replayed $n events: $(cat "$T/fromstart")"
pass "a stream starts with an id to resume from, before any event"

# Resume from the backlog: everything after the given id comes again.
first=$(grep -B1 '^data: ' "$T/stream" | sed -n 's/^id: //p' | head -1)
[ "$first" -gt "$start" ] || fail "first event id $first not above the starting id $start"
curl -sN --max-time 1 -H "Last-Event-ID: $first" "$URL/v1/events?prefix=ev:" >"$T/resume" || true
n=$(grep -c '^data: ' "$T/resume" || true)
[ "$n" = 5 ] || fail "resume after id $first replayed $n events: $(cat "$T/resume")"
pass "Last-Event-ID resumes from the backlog"

# Overflow the backlog of 8: an old id gets a reset event.
# Long TTLs: an expiry of one of these among them would shift the ids.
for i in $(seq 1 12); do acquire "of:$i" o 120000; done
curl -sN --max-time 1 -H "Last-Event-ID: $first" "$URL/v1/events" >"$T/reset" || true
grep -q '"type":"reset"' "$T/reset" || fail "no reset for an id older than the backlog: $(cat "$T/reset")"
pass "an id older than the backlog gets a reset event"

# The of:* events were published with nobody watching, so the hub kept
# them as data and formats them only now, in slots the ring has reused:
# resuming near the end of the backlog replays a contiguous run ending at
# of:12, whole and in order.  (zz:1's expiry may fall among these ids, so
# the run is 4 or 5 long.)
last=$(sed -n 's/^id: //p' "$T/reset" | tail -1)
[ -n "$last" ] || fail "the reset event carries no id: $(cat "$T/reset")"
curl -sN --max-time 1 -H "Last-Event-ID: $((last - 5))" "$URL/v1/events?prefix=of:" >"$T/late" || true
got=$(events_of "$T/late" type name owner_id)
case "$got" in
"acquired:of:9:o acquired:of:10:o acquired:of:11:o acquired:of:12:o " |\
"acquired:of:8:o acquired:of:9:o acquired:of:10:o acquired:of:11:o acquired:of:12:o ") ;;
*) fail "replay of events nobody watched: '$got' in $(cat "$T/late")" ;;
esac
prev=$((last - 5))
for i in $(sed -n 's/^id: //p' "$T/late"); do
    [ "$i" -gt "$prev" ] || fail "replayed ids not increasing after $((last - 5)): $(cat "$T/late")"
    prev=$i
done
pass "events published while nobody watched replay whole, in order"

# A consumer that never reads (tiny receive buffer) is cut once 2 KiB
# wait for it, instead of being buffered without bound.
"$TN_BIN/tn-sse-stall" "$PORT" 4000 >"$T/stall" &
stall=$!
tn_wait_subscribers 1
"$TN_BIN/tn-hammer" load --url "$URL" --out "$T/slow.grants" --conns 8 \
    --names 100000 --prefix "slow:" --ttl-min 5000 --ttl-max 5000 \
    --count 6000 --duration-ms 20000 >/dev/null 2>&1 ||
    fail "tn-hammer load failed"
cut=$(curl -s "$URL/metrics" | sed -n 's/^tenure_event_subscribers_cut_total //p')
[ "${cut:-0}" -ge 1 ] || fail "slow consumer not cut (cut_total=$cut)"
wait "$stall"
[ "$(cat "$T/stall")" = closed ] || fail "the stalled stream was not closed"
kill -0 "$SERVER_PID" || fail "server died"
pass "a slow consumer is cut, not buffered without bound"
