#!/usr/bin/env bash
# runs: embedded pg
# GET /v1/leases/{name}/history, on the store named by $1: past grants of
# a name, newest first, with owner, age and how each ended (released,
# expired, revoked; the live one has end null), the same JSON on both
# stores; limit bounds the answer; other names are not mixed in; a grant
# that ran out without anyone acquiring the name again shows as expired.
# On PostgreSQL (the grants ledger) also: another instance on the same
# database sees the same history, and a prune pass keeps the newest grants
# of each name (and so the highest token).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools
tn_use_store "${1:-embedded}"
tn_start_server
if [ "$STORE" = pg ]; then
    tn_server_start -i other -d "$T/data2" -l "$T/tenured2.log" || fail "$TN_SERVER_ERR"
fi

acquire "h:1" a 200
expect_code 201 "acquire h:1"
t1=$(jget token)
sleep 0.35 # expires (announced by a sweep, or by the next acquire)
acquire "h:1" b 5000
expect_code 201 "acquire after expiry"
t2=$(jget token)
s2=$(jget lease_secret)
acquire "h:2" x 5000
release "h:1" "$t2" "$s2"
expect_code 204 "release"
acquire "h:1" c 5000
t3=$(jget token)
rq DELETE "/v1/leases/h:1?force=true" -
expect_code 204 "force release"
acquire "h:1" d 5000
t4=$(jget token)

ngrants() { printf '%s' "$BODY" | "$TN_BIN/tn-json-get" grants | grep -o '"token"' | wc -l; }
g() { printf '%s' "$BODY" | "$TN_BIN/tn-json-get" "grants.$1.$2"; }
check_history() { # WHERE
    rj GET "/v1/leases/h:1/history"
    expect_code 200 "history ($1)"
    n=$(ngrants)
    [ "$n" = 4 ] || fail "history ($1) has $n grants: $BODY"
    [ "$(g 0 token)" = "$t4" ] && [ "$(g 0 end)" = null ] &&
        [ "$(g 0 ended_ms_ago)" = null ] && [ "$(g 0 owner_id)" = d ] ||
        fail "newest (live) grant ($1): $BODY"
    [ "$(g 1 token)" = "$t3" ] && [ "$(g 1 end)" = revoked ] || fail "revoked grant ($1): $BODY"
    [ "$(g 2 token)" = "$t2" ] && [ "$(g 2 end)" = released ] || fail "released grant ($1): $BODY"
    [ "$(g 3 token)" = "$t1" ] && [ "$(g 3 end)" = expired ] && [ "$(g 3 owner_id)" = a ] ||
        fail "expired grant ($1): $BODY"
    [ "$(g 3 granted_ms_ago)" -ge 350 ] && [ "$(g 3 granted_ms_ago)" -ge "$(g 0 granted_ms_ago)" ] ||
        fail "ages not in order ($1): $BODY"
    # The expired grant ended at its expiry, ~200 ms after it was granted.
    d=$(($(g 3 granted_ms_ago) - $(g 3 ended_ms_ago)))
    [ "$d" -ge 150 ] && [ "$d" -le 400 ] || fail "expired grant ended $d ms after its grant ($1): $BODY"
}
check_history "$STORE"
if [ "$STORE" = pg ]; then
    URL=${TN_SRV_URL[other]} check_history "the other instance"
    pass "history on PostgreSQL: the same on both instances"
fi
pass "history: newest first, released/expired/revoked, live has end null"

rj GET "/v1/leases/h:1/history?limit=2"
n=$(ngrants)
[ "$n" = 2 ] && [ "$(g 0 token)" = "$t4" ] || fail "limit=2 gave $n grants: $BODY"
rj GET "/v1/leases/h:2/history"
[ "$(ngrants)" = 1 ] && [ "$(g 0 owner_id)" = x ] || fail "another name's history: $BODY"
rj GET "/v1/leases/never/history"
expect_code 200 "history of a name never granted"
[ "$(jget grants)" = "[]" ] || fail "never-granted name: $BODY"
rj GET "/v1/leases/h:1/history?limit=0"
expect_error 400 bad_request "limit=0"
pass "history: limit, one name only, unknown name, bad limit"

# The lease expires without anyone acquiring it again: the history says
# expired (from the lease row, or from the sweep's ledger end).
acquire "h:3" e 150
t5=$(jget token)
sleep 0.4
rj GET "/v1/leases/h:3/history"
[ "$(g 0 token)" = "$t5" ] && [ "$(g 0 end)" = expired ] || fail "unrenewed grant: $BODY"
pass "a grant that ran out shows as expired"

[ "$STORE" = pg ] || exit 0
# Bounded: the prune statement (run by each instance every 30 s) keeps the
# newest grants of each name; run it now with a keep of 2 and check the
# highest token survives and the sequence floor rule still holds.
pg_psql "$PG_URL" "$("$TN_BIN/tn-pg-sql" stmt prune | sed 's/\$1/2/; s/;$//')"
rj GET "/v1/leases/h:1/history"
n=$(ngrants)
[ "$n" = 2 ] && [ "$(g 0 token)" = "$t4" ] && [ "$(g 1 token)" = "$t3" ] ||
    fail "after a prune keeping 2: $BODY"
top=$("$PG_BINDIR/psql" -X -At "$PG_URL" -c "SELECT max(token) FROM lease_grants")
[ "$top" -ge "$t5" ] || fail "the prune removed the highest token ($top < $t5)"
pass "the ledger prune keeps the newest grants of each name and the highest token"
