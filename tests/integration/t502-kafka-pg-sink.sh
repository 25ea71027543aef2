#!/usr/bin/env bash
# The materializer on a PostgreSQL sink (TENURE_TEST_PG_URL): the same
# tables as with SQLite for the same topic, the same result after kill -9
# at random moments, and the offset compare-and-set against a second
# materializer.  Skips only when TENURE_TEST_PG_URL is unset; fails when it
# is set and the database is unreachable.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-fence.sh"

if [ -z "${TENURE_TEST_PG_URL:-}" ]; then
    echo "skip: TENURE_TEST_PG_URL is not set (make check sets it via scripts/with-pg.sh)"
    exit 77
fi
fence_pg_db main
P1=$PG_SINK
fence_pg_db crash
P2=$PG_SINK
fence_pg_db race
P3=$PG_SINK
fence_pg_db claim
P4=$PG_SINK

fence_start_mock raw:3 one:1 work:2
"$TN_BIN/tn-produce" --brokers "$BROKERS" --topic raw --gen 5 --count 400 >/dev/null || fail produce
fence_mat --topic raw --sink "sqlite:$T/ref.db" --exit-at-end 2>/dev/null || fail "sqlite reference"
fence_dump "sqlite:$T/ref.db" >"$T/ref.dump"

fence_mat --topic raw --sink "$P1" --exit-at-end 2>"$T/pg.log" || fail "pg sink: $(tail -3 "$T/pg.log")"
fence_dump "$P1" | diff "$T/ref.dump" - >"$T/diff" || { head "$T/diff"; fail "PostgreSQL sink differs from SQLite sink"; }
psql "$P1" -At -c "SELECT tenure_fence_advance('shard:1', 0)" | grep -qx f \
    || fail "SQL function tenure_fence_advance missing or wrong"
pass "PostgreSQL sink holds the same tables as the SQLite sink"

kills=0
for round in $(seq 1 8); do
    fence_mat_bg "$T/crash.log" --topic raw --sink "$P2" --exit-at-end --batch 3 --batch-wait-ms 0
    sleep "0.$((RANDOM % 4))$((RANDOM % 10))"
    if kill -9 "$MAT_PID" 2>/dev/null; then kills=$((kills + 1)); fi
    wait "$MAT_PID" 2>/dev/null || true
done
fence_mat --topic raw --sink "$P2" --exit-at-end 2>>"$T/crash.log" || fail "final run: $(tail -3 "$T/crash.log")"
fence_dump "$P2" | diff "$T/ref.dump" - >"$T/diff2" || { head "$T/diff2"; fail "PostgreSQL sink after kill -9 differs"; }
pass "after $kills kill -9s the PostgreSQL sink equals an uninterrupted run"

fence_mat_bg "$T/a.log" --topic one --sink "$P3" --batch-wait-ms 0
A=$MAT_PID
fence_mat_bg "$T/b.log" --topic one --sink "$P3" --batch-wait-ms 0
B=$MAT_PID
for _ in $(seq 1 100); do
    grep -q started "$T/a.log" && grep -q started "$T/b.log" && break
    sleep 0.05
done
"$TN_BIN/tn-produce" --brokers "$BROKERS" --topic one --gen 9 --count 100 >/dev/null || fail produce
fence_wait_committed "$P3" one 100 || fail "records were not committed"
sleep 0.3
ra=running rb=running
if ! kill -0 "$A" 2>/dev/null; then ra=0; wait "$A" || ra=$?; fi
if ! kill -0 "$B" 2>/dev/null; then rb=0; wait "$B" || rb=$?; fi
{ [ "$ra" = running ] && [ "$rb" = 3 ]; } || { [ "$rb" = running ] && [ "$ra" = 3 ]; } \
    || fail "expected exactly one materializer to exit 3 (A=$ra B=$rb)"
rows=$(fence_sql "$P3" "SELECT (SELECT count(*) FROM tenure_admitted) + (SELECT count(*) FROM tenure_rejected)")
[ "$rows" = 100 ] || fail "expected each of the 100 records decided once, found $rows rows"
pass "on PostgreSQL a second materializer fails its offset compare-and-set and exits 3"

# Claim before read against a PostgreSQL sink: the worker's claim helper
# polls tenure_offsets there until the materializer has passed its claim.
fence_start_server
fence_mat_bg "$T/claim.log" --topic work --sink "$P4" --batch-wait-ms 10
"$TN_BIN/tn-worker" --server "$URL" --brokers "$BROKERS" --topic work --name shard:7 \
    --owner w1 --writes 1 --claim --sink "$P4" >"$T/w1.log" 2>&1 || fail "worker: $(cat "$T/w1.log")"
grep -q 'committed past the claim' "$T/w1.log" || fail "claim was not confirmed"
[ "$(fence_sql "$P4" "SELECT count(*) FROM tenure_admitted WHERE claim=1 AND resource='shard:7'")" = 1 ] \
    || fail "claim record not admitted in the PostgreSQL sink"
pass "claim before read waits on a PostgreSQL sink"
