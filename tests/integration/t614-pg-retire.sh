#!/usr/bin/env bash
# Retiring names on PostgreSQL (--retain-ms, docs/safety/retired-names.md):
# after a churn of unique short-lived names the tables hold the live and
# recent names only (leases and lease_grants rows bounded, not one per
# name ever seen), while the floor is kept: a retired name answers check
# with the retired floor (at least every token it had, current:false), GET
# 404, renew 409 lost; a live lease is never retired; after a kill -9 the
# same; a new grant of a retired name gets a token above the floor.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
. "$(dirname "$0")/lib-retire.sh"
need_tools
pg_need
pg_fresh_schema "t614_$$"
rows() { "$PG_BINDIR/psql" -X -At "$PG_URL" -c "SELECT (SELECT count(*) FROM leases) + (SELECT count(*) FROM lease_grants)"; }
metric() { curl -s --max-time 5 "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

tn_start_server --store "$PG_URL" --retain-ms 1000
retire_seed

N=3000
"$TN_BIN/tn-hammer" load --url "$URL" --out /dev/null --unique 1 --count "$N" \
    --ttl-min 100 --ttl-max 100 --conns 8 --duration-ms 120000 --prefix "job:" ||
    fail "load of $N unique names failed"
n=$(rows)
for _ in $(seq 1 300); do
    n=$(rows)
    [ "$n" -le 10 ] && break
    sleep 0.1
done
[ "$n" -le 10 ] || fail "$n rows of leases and lease_grants left after $N unique names"
floor=$(metric tenure_retired_floor)
[ "$floor" -ge $((N + 3)) ] || fail "tenure_retired_floor=$floor below the last token"
pass "$N unique names: $n rows left in leases and lease_grants (live and recent only), retired floor $floor"

retire_answers "$floor"
pass "retired: check current:false with the retired floor, GET 404, renew 409 lost; live kept"
tn_restart_server KILL --store "$PG_URL" --retain-ms 1000
retire_answers "$floor"
acquire "ret:a" o2 60000
expect_code 201 "a retired name granted again"
[ "$(jget token)" -gt "$floor" ] || fail "new grant of a retired name: token $(jget token) not above the floor $floor"
pass "after kill -9: the same answers; a new grant of a retired name is above the floor"
