#!/usr/bin/env bash
# Issue #36 item 2 on PostgreSQL: an acquire sent again with the same
# request_id answers the original grant even while others wait for the
# name, with or without wait_ms, on the instance that granted it, on
# another instance of the same database, and on that other instance once
# the first is gone (a client failing over).  Before the fix the replay
# was answered 409 held naming its own owner (without wait_ms), or queued
# behind the waiters (with it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need
pg_fresh_schema t617
pg_start_instance 1 "$PG_URL"
pg_start_instance 2 "$PG_URL"
URL=${URLS[1]}

acquire q holder 1000
expect_code 201 "holder of q"
# o waits for the holder's lease to run out, then holds q.
acquire q o 30000 '"request_id":"R-1","wait_ms":10000'
expect_code 201 "o's waiting acquire"
tok=$(jget token)
sec=$(jget lease_secret)

# x waits for q on both instances.
for i in 1 2; do
    curl -s --max-time 20 -o "$T/x$i.body" -w '%{http_code}' \
        -d '{"name":"q","owner_id":"x","ttl_ms":5000,"wait_ms":15000}' \
        "${URLS[$i]}/v1/leases" >"$T/x$i.code" &
    eval "xpid$i=\$!"
done
sleep 0.3

# replay N WHERE [EXTRA]: o's very request again, answered at once with
# the original grant.
replay() {
    local t0 el
    URL=${URLS[$1]}
    t0=$(now_ms)
    acquire q o 30000 "\"request_id\":\"R-1\"${3:+,$3}"
    el=$(($(now_ms) - t0))
    expect_code 200 "replay $2"
    expect_field token "$tok" "replay $2"
    expect_field lease_secret "$sec" "replay $2"
    [ "$el" -lt 3000 ] || fail "replay $2 answered after $el ms"
}
replay 1 "with wait_ms, same instance" '"wait_ms":10000'
replay 1 "without wait_ms, same instance"
replay 2 "with wait_ms, other instance" '"wait_ms":10000'
replay 2 "without wait_ms, other instance"
pass "a replay answers the original grant while others wait, on either instance"

# The instance that granted it goes away; the client fails over.
pg_kill_instance 1
replay 2 "with wait_ms, after failover" '"wait_ms":10000'
replay 2 "without wait_ms, after failover"
pass "a replay after failover answers the original grant"

# The waiters were never passed over: released, q goes to x on 2.
URL=${URLS[2]}
release q "$tok" "$sec"
expect_code 204 "o releases q"
wait "$xpid2" || fail "x's wait on instance 2: curl failed"
[ "$(cat "$T/x2.code")" = 201 ] || fail "x on 2 got $(cat "$T/x2.code"): $(cat "$T/x2.body")"
BODY=$(cat "$T/x2.body")
[ "$(jget token)" -gt "$tok" ] || fail "x's token not above o's: $BODY"
pass "the waiter gets q once o releases it, with a higher token"
