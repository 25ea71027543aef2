#!/usr/bin/env bash
# Three tenured instances over one PostgreSQL; 16 clients contend on 4
# names with TTLs of 1-50 ms through all three while instances are killed
# (-9) and restarted.  The recorded history must pass tenure-check: tokens
# unique and increasing in real-time order, no grant while an earlier lease
# was certainly valid, no renew/release of a superseded lease.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need
[ -x "$TN_BIN/tenure-check" ] || fail "tenure-check is not built"

pg_fresh_schema "t601_$$"
for n in 0 1 2; do
    pg_start_instance "$n" "$PG_URL" --min-ttl-ms 1
done
pass "three instances ready on one database"

"$TN_BIN/tn-pg-history" --urls "${URLS[0]},${URLS[1]},${URLS[2]}" \
    --out "$T/history.jsonl" --workers 16 --names 4 --duration-ms 9000 \
    --ttl-min 1 --ttl-max 50 2>"$T/summary.txt" &
hist=$!

# nemesis: every 1.5 s kill one instance (-9), restart it 0.4 s later
kills=0
for round in 1 2 3 4 5; do
    sleep 1.1
    n=$((round % 3))
    pg_kill_instance "$n"
    kills=$((kills + 1))
    sleep 0.4
    pg_restart_instance "$n"
done
wait "$hist" || fail "tn-pg-history failed: $(cat "$T/summary.txt")"
cat "$T/summary.txt"
for n in 0 1 2; do
    tn_wait_ready "${URLS[$n]}" 10 || fail "instance $n not ready after the run"
done

ok=$(grep -c '"op":"acquire","phase":"ok"' "$T/history.jsonl" || true)
[ "$ok" -ge 200 ] || fail "only $ok granted acquires: the test did not exercise contention"
infos=$(grep -c '"phase":"info"' "$T/history.jsonl" || true)
renews=$(grep -c '"op":"renew","phase":"ok"' "$T/history.jsonl" || true)
[ "$renews" -ge 20 ] || fail "only $renews successful renews"
pass "history: $ok grants, $renews renews, $infos unknown outcomes, $kills kills"

set +e
"$TN_BIN/tenure-check" "$T/history.jsonl" >"$T/check.json"
rc=$?
set -e
[ "$rc" = 0 ] || { cat "$T/check.json" >&2; TN_KEEP=1; fail "tenure-check found violations (rc=$rc)"; }
pass "tenure-check: no violation in $(wc -l <"$T/history.jsonl") events"

# the database agrees: every granted token is in the ledger, once
dups=$("$PG_BINDIR/psql" -X -At "$PG_URL" -c \
    "SELECT count(*) - count(DISTINCT token) FROM lease_grants")
[ "$dups" = 0 ] || fail "duplicate tokens in the ledger"
pg_psql "$TENURE_TEST_PG_URL" "DROP SCHEMA t601_$$ CASCADE" 2>/dev/null || true
pass "multi-instance history is consistent"
