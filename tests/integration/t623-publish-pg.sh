#!/usr/bin/env bash
# --publish on the PostgreSQL store: two instances on one database, both
# with --publish to the same Redis stream; only the instance holding the
# advisory lock publishes, so the stream carries each of the cluster's
# events once (at least once), in order, with no gap, whichever instance
# granted it.  When that instance is killed (-9) the other takes over
# with one reset, and the stream goes on whole, with ids above all before.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-pg.sh"
. "$(dirname "$0")/lib-publish.sh"
pg_need

pub_start_redis
S=tenure:events
pg_fresh_schema "t623_$$"
for n in 0 1; do
    pg_start_instance "$n" "$PG_URL" --publish "redis://127.0.0.1:$REDIS_PORT/$S"
done
leader() {
    local n
    for _ in $(seq 1 100); do
        for n in 0 1; do
            [ "$(URL=${URLS[$n]} pub_metric tenure_publish_leader)" = 1 ] && { echo "$n"; return 0; }
        done
        sleep 0.05
    done
    return 1
}
L=$(leader) || fail "no instance became the publisher"
O=$((1 - L))
[ "$(URL=${URLS[$O]} pub_metric tenure_publish_leader)" = 0 ] || fail "both instances publish"

hammer() { "$TN_BIN/tn-hammer" load --url "$1" --conns 4 --out "$2" --names 100000 \
    --ttl-min 60000 --ttl-max 60000 --count "$3" --duration-ms 60000 2>>"$T/hammer.log"; }
hammer "${URLS[0]}" "$T/g0" 500 & h0=$!
hammer "${URLS[1]}" "$T/g1" 500 & h1=$!
wait "$h0" && wait "$h1" || fail "load: $(tail -2 "$T/hammer.log")"
for _ in $(seq 1 200); do
    [ "$(rcli XLEN "$S")" -ge 1000 ] && break
    sleep 0.05
done
URL=${URLS[$L]} pub_wait_caught_up
pub_dump "$S" >"$T/d1"
cat "$T/g0" "$T/g1" >"$T/g01"
r=$(pub_check "$T/d1" "$T/g01")
pass "two instances, one publisher (instance $L): $r"
last=$(tail -1 "$T/d1" | cut -d' ' -f1)

pg_kill_instance "$L"
n=$(wc -l <"$T/d1")
for _ in $(seq 1 200); do
    [ "$(URL=${URLS[$O]} pub_metric tenure_publish_leader)" = 1 ] && break
    sleep 0.05
done
[ "$(URL=${URLS[$O]} pub_metric tenure_publish_leader)" = 1 ] || fail "instance $O never took over"
hammer "${URLS[$O]}" "$T/g2" 300 || fail "load: $(tail -2 "$T/hammer.log")"
for _ in $(seq 1 200); do
    [ "$(rcli XLEN "$S")" -ge $((n + 301)) ] && break
    sleep 0.05
done
URL=${URLS[$O]} pub_wait_caught_up
pub_dump "$S" | tail -n +$((n + 1)) >"$T/d2"
head -1 "$T/d2" | grep -q ' reset ' || fail "the new publisher did not start with a reset: $(head -1 "$T/d2")"
first=$(head -1 "$T/d2" | cut -d' ' -f1)
[ "$first" -gt "$last" ] || fail "the new publisher's ids ($first) do not start above the old one's ($last)"
r=$(pub_check "$T/d2" "$T/g2" 1)
pass "after kill -9 of the publisher, instance $O took over: $r"
