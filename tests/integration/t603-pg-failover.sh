#!/usr/bin/env bash
# Failover: a primary with a synchronous standby (pg_basebackup), tenured
# on a multi-host connection string (target_session_attrs=read-write) under
# a contending client load; the primary is killed (-9, with its children),
# the standby promoted, and tenured reconnects to it by itself.  Proof that
# no token was reused: tenure-check passes on the whole history (duplicate
# tokens and real-time token order across the failover), the first grant
# after the failover is above every grant before it, and every token a
# client was granted is in the promoted standby's ledger (nothing
# acknowledged was lost).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need
[ -x "$TN_BIN/tenure-check" ] || fail "tenure-check is not built"
pg_private_dir
pa=$(pg_cluster port)
pb=$(pg_cluster port)
while [ "$pb" = "$pa" ]; do pb=$(pg_cluster port); done
pg_cluster init "$PGPRIV/a" "$pa" tn_standby
pg_cluster standby "$PGPRIV/b" "$pb" "$pa" tn_standby
psqla() { "$PG_BINDIR/psql" -X -At -h 127.0.0.1 -p "$pa" -U postgres postgres -c "$1"; }
psqlb() { "$PG_BINDIR/psql" -X -At -h 127.0.0.1 -p "$pb" -U postgres postgres -c "$1"; }
for _ in $(seq 1 100); do
    [ "$(psqla "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'tn_standby'")" = sync ] && break
    sleep 0.1
done
[ "$(psqla "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'tn_standby'")" = sync ] ||
    fail "the standby is not synchronous"
pass "primary :$pa with synchronous standby :$pb"

tn_start_server --min-ttl-ms 1 --store \
    "postgresql://postgres@127.0.0.1:$pa,127.0.0.1:$pb/postgres?target_session_attrs=read-write&connect_timeout=2"
"$TN_BIN/tn-pg-history" --urls "$URL" --out "$T/history.jsonl" --workers 8 \
    --names 3 --duration-ms 7000 --ttl-min 1 --ttl-max 50 2>"$T/summary.txt" &
hist=$!
sleep 2.5
before=$(psqla "SELECT coalesce(max(token), 0) FROM lease_grants")
pg_cluster kill "$PGPRIV/a"
pg_cluster promote "$PGPRIV/b"
pass "primary killed at token $before, standby promoted"
wait_code /readyz 200 15 || fail "tenured did not reconnect to the promoted standby"
pass "tenured ready again on the promoted standby"
wait "$hist" || fail "tn-pg-history failed"
cat "$T/summary.txt"

set +e
"$TN_BIN/tenure-check" "$T/history.jsonl" >"$T/check.json"
rc=$?
set -e
[ "$rc" = 0 ] || { cat "$T/check.json" >&2; fail "tenure-check found violations (rc=$rc)"; }
pass "tenure-check: no violation across the failover"

after=$(psqlb "SELECT min(token) FROM lease_grants WHERE token > $before")
[ -n "$after" ] || fail "no grant after the failover"
maxok=$(grep '"op":"acquire","phase":"ok"' "$T/history.jsonl" |
    sed 's/.*"token":\([0-9]*\).*/\1/' | sort -n | tail -1)
[ "$maxok" -gt "$before" ] || fail "no client got a token after the failover"
grep '"op":"acquire","phase":"ok"' "$T/history.jsonl" |
    sed 's/.*"token":\([0-9]*\).*/\1/' | sort -n -u >"$T/granted.txt"
psqlb "SELECT token FROM lease_grants ORDER BY token" >"$T/ledger.txt"
# A set difference on numbers: comm(1) wants lexical order, which numeric
# order is not once tokens cross a power of ten.
missing=$(awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen)' \
    "$T/ledger.txt" "$T/granted.txt" | wc -l)
[ "$missing" = 0 ] || fail "$missing granted tokens are missing from the promoted standby"
dups=$(psqlb "SELECT count(*) - count(DISTINCT token) FROM lease_grants")
[ "$dups" = 0 ] || fail "duplicate tokens in the ledger"
pass "$(wc -l <"$T/granted.txt") granted tokens all on the standby, none reused (max before kill $before, max granted $maxok)"
