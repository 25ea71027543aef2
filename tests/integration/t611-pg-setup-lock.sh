#!/usr/bin/env bash
# A starting instance's setup takes a table lock on leases (the sequence
# step, migrations); a lock that waits holds back every writer queued
# behind it.  While a long transaction elsewhere holds a conflicting lock
# (psql, 8 s), the starting instance must give up after its lock timeout
# and try again, so the running instance keeps granting (each acquire
# answered 201 within 3 s), and it must start once the transaction ends.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
need_tools
pg_need

pg_fresh_schema t611
pg_start_instance 1 "$PG_URL"
sql() { "$PG_BINDIR/psql" -X -A -t -q "$PG_URL" -c "$1"; }

# The long transaction: ROW EXCLUSIVE on leases, as a slow writer holds.
PGAPPNAME=t611-holder "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 "$PG_URL" \
    -c "BEGIN; LOCK TABLE leases IN ROW EXCLUSIVE MODE; SELECT pg_sleep(8); COMMIT;" \
    >"$T/holder.log" 2>&1 &
holder=$!
for _ in $(seq 1 200); do
    [ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 't611-holder' AND wait_event = 'PgSleep'")" = 1 ] && break
    sleep 0.05
done
[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 't611-holder' AND wait_event = 'PgSleep'")" = 1 ] ||
    fail "the holder never held its lock: $(cat "$T/holder.log")"

# Instance 2 starts meanwhile: its setup asks for SHARE ROW EXCLUSIVE.
pg_spawn_instance 2 "$PG_URL"
queued=0
for _ in $(seq 1 200); do
    if grep -q 'waits for a table lock' "$T/tenured2.log" 2>/dev/null ||
        [ "$(sql "SELECT count(*) FROM pg_locks WHERE relation = 'leases'::regclass AND NOT granted")" -gt 0 ]; then
        queued=1
        break
    fi
    sleep 0.05
done
[ "$queued" = 1 ] || fail "instance 2 never asked for the table lock"

# Instance 1 grants throughout.
URL=${URLS[1]}
t0=$(now_ms)
for i in 1 2 3 4 5; do
    CURL_MAX=3 acquire "lk:$i" o 60000
    expect_code 201 "acquire $i on instance 1 while instance 2 starts"
    sleep 0.2
done
t1=$(now_ms)
kill -0 "$holder" 2>/dev/null ||
    fail "the holder ended before the acquires did ($((t1 - t0)) ms): the test proves nothing"
pass "writes go on while a starting instance waits for a table lock ($((t1 - t0)) ms for 5 acquires)"

wait "$holder" || fail "the holder failed: $(cat "$T/holder.log")"
tn_server_wait 2 20 ||
    fail "instance 2 did not start after the lock was released"
URL=${URLS[2]}
n=$(curl -s "$URL/metrics" | awk '$1 == "tenure_pg_setup_lock_timeouts_total" {print $2}')
[ "${n:-0}" -gt 0 ] || fail "instance 2 never timed out on the lock (tenure_pg_setup_lock_timeouts_total=$n)"
acquire "lk:6" o 60000
expect_code 201 "acquire on instance 2"
pass "the starting instance gave up on the lock $n times and started once it was free"
