#!/usr/bin/env bash
# runs: redis kafka
# tenured --publish to the target named by $1, a real Redis stream
# (redis://) or a Kafka topic of librdkafka's mock cluster (kafka://,
# records keyed by lease name): every event reaches it in event-id order,
# at least once, with no gap -- across 10,000 events, while the target is
# frozen (SIGSTOP) during grants, and across a kill -9 of tenured (one
# reset record marks the crash, and the next start logs that the last stop
# was not clean).  On Redis also: the target is reported down while it is
# frozen, and a backlog overflow gives exactly one reset and a gap-free
# stream after it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-fence.sh"
. "$(dirname "$0")/lib-publish.sh"

TARGET=${1:-redis}
pub_start_target "$TARGET"
case $TARGET in
redis)
    PUB=(--publish "$PUB_URL" --publish-maxlen 0)
    FROZEN_PID=$REDIS_PID FROZEN_MS=2500
    dump() { pub_dump "$S"; }
    ;;
kafka)
    PUB=(--publish "$PUB_URL" --publish-opt kafka.message.timeout.ms=1500)
    FROZEN_PID=$MOCK_PID FROZEN_MS=3000
    dump() { pub_dump_kafka lease-events; }
    ;;
esac
tn_start_server "${PUB[@]}"
hammer() { "$TN_BIN/tn-hammer" load --url "$URL" --conns 8 "$@" 2>>"$T/hammer.log"; }

# 1. 10,000 events: 5,000 grants with short TTLs, and their expiries.
hammer --out "$T/g1" --names 400 --ttl-min 100 --ttl-max 300 --count 5000 --duration-ms 120000 ||
    fail "load: $(tail -2 "$T/hammer.log")"
pub_wait_expired
pub_wait_caught_up
dump >"$T/d1"
[ "$(wc -l <"$T/d1")" -ge 10000 ] || fail "only $(wc -l <"$T/d1") entries for 5,000 grants and their expiries"
if [ "$TARGET" = kafka ]; then
    kcat -C -b "$BROKERS" -t lease-events -e -q -c 1 -f '%k\n' 2>/dev/null | grep -q '^hammer:' ||
        fail "records are not keyed by the lease name"
fi
r=$(pub_check "$T/d1" "$T/g1")
pass "10,000 events ($TARGET): $r"

# 2. The target frozen during grants: grants go on, nothing is lost after.
hammer --out "$T/g2" --names 400 --ttl-min 100 --ttl-max 300 --duration-ms $((FROZEN_MS + 2000)) &
H=$!
pub_wait_grants "$T/g2"
kill -STOP "$FROZEN_PID"
n0=$(grep -c '^grant' "$T/g2")
sleep_ms "$FROZEN_MS"
n1=$(grep -c '^grant' "$T/g2")
[ $((n1 - n0)) -gt 100 ] ||
    fail "only $((n1 - n0)) grants in $FROZEN_MS ms while $TARGET was stopped: grants waited on the target"
if [ "$TARGET" = redis ]; then
    # Down is noticed after redis.timeout_ms (2 s) of silence.
    for _ in $(seq 1 100); do [ "$(pub_metric tenure_publish_up)" = 0 ] && break; sleep 0.05; done
    [ "$(pub_metric tenure_publish_up)" = 0 ] || fail "target still reported up while Redis is stopped"
fi
kill -CONT "$FROZEN_PID"
wait "$H" || fail "load during the outage: $(tail -2 "$T/hammer.log")"
pub_wait_expired
pub_wait_caught_up
dump >"$T/d2"
r=$(pub_check "$T/d2" "$T/g2")
pass "$TARGET stopped $FROZEN_MS ms during grants ($((n1 - n0)) grants meanwhile): $r"

# 3. kill -9 of tenured while publishing (on Redis with a backlog: Redis
# frozen for the last half second): the restart resumes from the log and
# the saved cursor, with one reset for the instant before the crash.
hammer --out "$T/g3" --names 400 --ttl-min 2000 --ttl-max 4000 --duration-ms 10000 \
    --kill-pid "$SERVER_PID" --kill-after-ms 1500 &
H=$!
if [ "$TARGET" = redis ]; then
    sleep 1
    kill -STOP "$REDIS_PID"
fi
wait "$H" || true
wait "$SERVER_PID" 2>/dev/null || true
kill -CONT "$FROZEN_PID"
tn_start_server "${PUB[@]}"
pub_wait_caught_up
dump >"$T/d3"
cat "$T/g1" "$T/g2" "$T/g3" >"$T/g123"
r=$(pub_check "$T/d3" "$T/g123" 1)
pass "kill -9 while publishing: $r"
[ "$(pub_metric tenure_publish_resets_total)" = 0 ] || fail "the crash reset was counted as a backlog reset"
grep -q '"the last stop was not clean' "$T/tenured.log" || fail "no unclean-stop notice after kill -9"

if [ "$TARGET" = redis ]; then
    # 4. Backlog overflow: exactly one reset, then a gap-free stream.
    tn_restart_server TERM "${PUB[@]}" --publish-backlog 100
    before=$(rcli XLEN "$S")
    kill -STOP "$REDIS_PID"
    hammer --out "$T/g4" --prefix over: --names 100000 --ttl-min 60000 --ttl-max 60000 --count 300 --duration-ms 60000 ||
        fail "load: $(tail -2 "$T/hammer.log")"
    tn_wait_metric 'tenure_publish_resets_total{target="redis://127.0.0.1:'"$REDIS_PORT/$S"'"}' 1 "a backlog reset"
    kill -CONT "$REDIS_PID"
    hammer --out "$T/g5" --prefix after: --names 100000 --ttl-min 60000 --ttl-max 60000 --count 50 --duration-ms 60000 ||
        fail "load: $(tail -2 "$T/hammer.log")"
    pub_wait_caught_up
    pub_dump "$S" | tail -n +$((before + 1)) >"$T/d4"
    # XADDs already in flight when Redis froze may land before the reset;
    # from the reset on, the stream is whole.
    [ "$(grep -c ' reset ' "$T/d4")" = 1 ] || fail "expected one reset after the overflow: $(grep ' reset ' "$T/d4" | head -3)"
    sed -n '/ reset /,$p' "$T/d4" >"$T/d4r"
    r=$(pub_check "$T/d4r" "$T/g5" 1)
    pass "backlog overflow: $r; resets counted: $(pub_metric tenure_publish_resets_total)"
fi
tn_server_stop main TERM
