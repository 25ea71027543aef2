#!/usr/bin/env bash
# libtenure-kafka's follower of the Kafka topic tenured --publish fills
# (librdkafka's mock cluster, one partition): a holder learns of a force
# release long before its renew timer (the time is printed, not held to a
# bound), and the SSE follower's reset rule holds: a reset record, or a
# jump in the events' ids, makes it renew every kept lease at once and so
# find a loss it never heard of.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-fence.sh"
. "$(dirname "$0")/lib-publish.sh"
command -v kcat >/dev/null || { echo "SKIP: no kcat (scripts/deps.sh)"; exit 77; }

fence_start_mock lease-events:1
EV="kafka://$BROKERS/lease-events"
fence_start_server --publish "$EV"
TTL=30000 # the renew timer is 10 s away

# start NAME: the holder in the background, output in $T/NAME.
start() {
    "$TN_BIN/tn-ev-loss" "$URL" "$1" "$TTL" "$EV" >"$T/$1" 2>&1 &
    PROBE=$!
    fence_track "$PROBE"
    for _ in $(seq 1 400); do
        grep -q '^acquired' "$T/$1" && break
        sleep 0.05
    done
    grep -q '^acquired' "$T/$1" || fail "tn-ev-loss did not acquire: $(cat "$T/$1")"
}

# last_id: the id of the topic's newest record.
last_id() {
    kcat -C -b "$BROKERS" -t lease-events -o -1 -e -q -f '%s\n' 2>/dev/null |
        sed -E 's/^\{"id":([0-9]+),.*/\1/' | tail -1
}
produce() { echo "$1" | kcat -P -b "$BROKERS" -t lease-events -p 0 2>/dev/null; }

for i in 1 2 3; do
    start "fr:$i"
    curl -s -o /dev/null -X DELETE "$URL/v1/leases/fr:$i?force=true"
    wait "$PROBE" || fail "tn-ev-loss: $(cat "$T/fr:$i")"
    set -- $(sed -n 2p "$T/fr:$i")
    [ "$1" = lost ] && [ "$3" = lost ] || fail "the holder never learned of the force release through Kafka: $(cat "$T/fr:$i")"
    pass "force release heard through the Kafka topic ($2 ms after acquiring; renew timer 10 s)"
done

# The reset rule (60 s TTL: renew timer 20 s away): revoke with the
# publisher off (no event reaches the topic), then a reset record.
TTL=60000
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
fence_start_server
start rs:1
curl -s -o /dev/null -X DELETE "$URL/v1/leases/rs:1?force=true"
sleep 0.5
[ "$(sed -n 2p "$T/rs:1")" = "" ] || fail "the holder learned of an unpublished revoke: $(cat "$T/rs:1")"
last=$(last_id)
[ -n "$last" ] || fail "no record on the topic"
t0=$(date +%s%3N)
produce '{"id":'$((last + 1))',"type":"reset","name":"","owner_id":"","token":0,"floor":0,"at_ms":0}'
wait "$PROBE" || fail "tn-ev-loss: $(cat "$T/rs:1")"
set -- $(sed -n 2p "$T/rs:1")
[ "$1" = lost ] && [ $(($4 - t0)) -lt 10000 ] || fail "a reset record did not make the holder renew at once: $(cat "$T/rs:1" | tr '\n' ' ')"
pass "a reset record on the topic made the holder renew at once and find the loss ($(($4 - t0)) ms after it; renew timer 20 s)"

# The same through a jump in ids.
start gp:1
curl -s -o /dev/null -X DELETE "$URL/v1/leases/gp:1?force=true"
sleep 0.5
[ "$(sed -n 2p "$T/gp:1")" = "" ] || fail "the holder learned of an unpublished revoke: $(cat "$T/gp:1")"
t0=$(date +%s%3N)
produce '{"id":'$((last + 10))',"type":"acquired","name":"other","owner_id":"x","token":999,"floor":999,"at_ms":0}'
wait "$PROBE" || fail "tn-ev-loss: $(cat "$T/gp:1")"
set -- $(sed -n 2p "$T/gp:1")
[ "$1" = lost ] && [ $(($4 - t0)) -lt 10000 ] || fail "a jump in event ids did not make the holder renew at once: $(cat "$T/gp:1" | tr '\n' ' ')"
pass "a jump in the topic's event ids made the holder renew at once and find the loss ($(($4 - t0)) ms after it)"
