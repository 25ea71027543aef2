#!/usr/bin/env bash
# runs: redis kafka
# libtenure following what tenured --publish fills (events_url) instead of
# the SSE stream, on the target named by $1: a Redis stream, or a Kafka
# topic of librdkafka's mock cluster (one partition, libtenure-kafka's
# follower).  A holder learns of a force release in well under its renew
# timer (the time is printed; the 100 ms goal is measured by
# bench/publish.sh, not asserted here, since a busy machine must not fail
# a test), and the SSE follower's reset rule holds: a reset record, or a
# jump in the events' ids, makes it renew every kept lease at once, and so
# find a loss it never heard of.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-fence.sh"
. "$(dirname "$0")/lib-publish.sh"

TARGET=${1:-redis}
pub_start_target "$TARGET"
EV=$PUB_URL
case $TARGET in
redis)
    ROUNDS=5 BOUND_MS=5000
    # last_id: the id of the newest entry; append ID TYPE NAME TOKEN.
    last_id() { rcli XREVRANGE "$S" + - COUNT 1 | sed -n 3p; }
    append() {
        rcli XADD "$S" '*' id "$1" type "$2" name "$3" owner_id x token "$4" floor "$4" \
            at_ms 0 >/dev/null
    }
    ;;
kafka)
    ROUNDS=3 BOUND_MS=10000
    last_id() {
        kcat -C -b "$BROKERS" -t lease-events -o -1 -e -q -f '%s\n' 2>/dev/null |
            sed -E 's/^\{"id":([0-9]+),.*/\1/' | tail -1
    }
    append() {
        echo '{"id":'"$1"',"type":"'"$2"'","name":"'"$3"'","owner_id":"x","token":'"$4"',"floor":'"$4"',"at_ms":0}' |
            kcat -P -b "$BROKERS" -t lease-events -p 0 2>/dev/null
    }
    ;;
esac
tn_start_server --publish "$EV"
TTL=30000 # the renew timer is 10 s away

# start NAME: the holder in the background, output in $T/NAME.
start() {
    "$TN_BIN/tn-ev-loss" "$URL" "$1" "$TTL" "$EV" >"$T/$1" 2>&1 &
    PROBE=$!
    TN_PIDS+=("$PROBE")
    for _ in $(seq 1 400); do
        grep -q '^acquired' "$T/$1" && break
        sleep 0.05
    done
    grep -q '^acquired' "$T/$1" || fail "tn-ev-loss did not acquire: $(cat "$T/$1")"
    if [ "$TARGET" = redis ]; then
        sleep 0.5 # its follower has found where the stream ends
    fi
}

lat=()
for i in $(seq 1 "$ROUNDS"); do
    start "fr:$i"
    curl -s -o /dev/null -X DELETE "$URL/v1/leases/fr:$i?force=true"
    wait "$PROBE" || fail "tn-ev-loss: $(cat "$T/fr:$i")"
    set -- $(sed -n 2p "$T/fr:$i")
    [ "$1" = lost ] || fail "the holder never learned of the force release: $(cat "$T/fr:$i")"
    if [ "$TARGET" = kafka ]; then
        [ "$3" = lost ] || fail "the holder's renew did not find the loss: $(cat "$T/fr:$i")"
        lat+=("$2")
        continue
    fi
    at=$(pub_dump "$S" | awk -v n="fr:$i" '$2 == "revoked" && $3 == n {print $1; exit}')
    at_ms=$(rcli XRANGE "$S" - + | awk -v id="$at" 'p && $0 == "at_ms" {getline; print; exit} $0 == "id" {getline; p = ($0 == id)}')
    [ -n "$at_ms" ] || fail "no revoked event for fr:$i in the stream"
    lat+=($(($4 - at_ms)))
    [ "${lat[-1]}" -lt 2000 ] || fail "the loss took ${lat[-1]} ms through the Redis stream (renew timer: 10 s)"
done
if [ "$TARGET" = redis ]; then
    pass "force release heard through the Redis stream ${lat[*]} ms after tenured logged it"
else
    pass "force release heard through the Kafka topic ${lat[*]} ms after acquiring (renew timer 10 s)"
fi

# The reset rule (a 60 s TTL: the renew timer is 20 s away, far beyond
# any restart below): revoke with the publisher off (no event reaches the
# target), then a reset record, as the publisher sends after an overflow.
TTL=60000
tn_restart_server TERM
start rs:1
curl -s -o /dev/null -X DELETE "$URL/v1/leases/rs:1?force=true"
sleep 0.5
[ "$(sed -n 2p "$T/rs:1")" = "" ] || fail "the holder learned of an unpublished revoke: $(cat "$T/rs:1")"
last=$(last_id)
[ -n "$last" ] || fail "nothing on the $TARGET target"
t0=$(date +%s%3N)
append $((last + 1)) reset "" 0
wait "$PROBE" || fail "tn-ev-loss: $(cat "$T/rs:1")"
set -- $(sed -n 2p "$T/rs:1")
[ "$1" = lost ] && [ $(($4 - t0)) -lt "$BOUND_MS" ] ||
    fail "a reset record did not make the holder renew at once: $(cat "$T/rs:1" | tr '\n' ' ')"
pass "a reset record on the $TARGET target made the holder renew at once and find the loss ($(($4 - t0)) ms after the reset; its renew timer was 20 s away)"

# The same through a jump in ids (the stream was trimmed past the holder).
start gp:1
curl -s -o /dev/null -X DELETE "$URL/v1/leases/gp:1?force=true"
sleep 0.5
[ "$(sed -n 2p "$T/gp:1")" = "" ] || fail "the holder learned of an unpublished revoke: $(cat "$T/gp:1")"
t0=$(date +%s%3N)
append $((last + 10)) acquired other 999
wait "$PROBE" || fail "tn-ev-loss: $(cat "$T/gp:1")"
set -- $(sed -n 2p "$T/gp:1")
[ "$1" = lost ] && [ $(($4 - t0)) -lt "$BOUND_MS" ] ||
    fail "a jump in event ids did not make the holder renew at once: $(cat "$T/gp:1" | tr '\n' ' ')"
pass "a jump in the $TARGET target's event ids made the holder renew at once and find the loss ($(($4 - t0)) ms after it)"
