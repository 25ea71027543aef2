#!/usr/bin/env bash
# tenured --publish kafka://...: every event reaches a Kafka topic (librdkafka's
# mock cluster) keyed by lease name, at least once and with no gap in ids,
# across 10,000 events, a frozen cluster (SIGSTOP) during grants, and a
# kill -9 of tenured (one reset record marks the crash).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-fence.sh"
. "$(dirname "$0")/lib-publish.sh"
command -v kcat >/dev/null || { echo "SKIP: no kcat (scripts/deps.sh)"; exit 77; }

fence_start_mock lease-events:1
PUB=(--publish "kafka://$BROKERS/lease-events" --publish-opt kafka.message.timeout.ms=1500)
fence_start_server "${PUB[@]}"
hammer() { "$TN_BIN/tn-hammer" load --url "$URL" --conns 8 "$@" 2>>"$T/hammer.log"; }

hammer --out "$T/g1" --names 400 --ttl-min 100 --ttl-max 300 --count 5000 --duration-ms 120000 ||
    fail "load: $(tail -2 "$T/hammer.log")"
sleep 0.5
pub_wait_caught_up
pub_dump_kafka lease-events >"$T/d1"
[ "$(wc -l <"$T/d1")" -ge 10000 ] || fail "only $(wc -l <"$T/d1") records for 5,000 grants and their expiries"
kcat -C -b "$BROKERS" -t lease-events -e -q -c 1 -f '%k\n' 2>/dev/null | grep -q '^hammer:' ||
    fail "records are not keyed by the lease name"
r=$(pub_check "$T/d1" "$T/g1")
pass "10,000 events: $r"

hammer --out "$T/g2" --names 400 --ttl-min 100 --ttl-max 300 --duration-ms 5000 &
H=$!
pub_wait_grants "$T/g2"
kill -STOP "$MOCK_PID"
n0=$(grep -c '^grant' "$T/g2")
sleep 3
n1=$(grep -c '^grant' "$T/g2")
kill -CONT "$MOCK_PID"
wait "$H" || fail "load during the outage: $(tail -2 "$T/hammer.log")"
[ $((n1 - n0)) -gt 100 ] || fail "only $((n1 - n0)) grants in 3 s while Kafka was stopped"
sleep 0.5
pub_wait_caught_up
pub_dump_kafka lease-events >"$T/d2"
r=$(pub_check "$T/d2" "$T/g2")
pass "Kafka stopped 3 s during grants ($((n1 - n0)) grants meanwhile): $r"

hammer --out "$T/g3" --names 400 --ttl-min 2000 --ttl-max 4000 --duration-ms 10000 \
    --kill-pid "$SERVER_PID" --kill-after-ms 1500 || true
wait "$SERVER_PID" 2>/dev/null || true
fence_start_server "${PUB[@]}"
pub_wait_caught_up
pub_dump_kafka lease-events >"$T/d3"
cat "$T/g1" "$T/g2" "$T/g3" >"$T/g123"
r=$(pub_check "$T/d3" "$T/g123" 1)
pass "kill -9 while publishing: $r"
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
