#!/usr/bin/env bash
# Parked waiters cannot lock everyone out (issue #36, 2026-12-07).  A blocking acquire
# holds its connection until it is answered and cannot be evicted: with
# default settings 1,000 clients waiting on one held name filled
# --max-connections (1000), and /healthz, /readyz and every other client
# were refused until they left.  Now blocking acquires and event streams
# together may hold at most --max-connections minus --reserved-connections
# (100), beyond which they get 503 capacity, and one client address (and,
# with authentication, one principal) at most --max-waiters-per-address /
# --max-waiters-per-principal (256) blocking acquires, beyond which 429
# too_many_requests.  Checked: 1,000 waiters at the defaults (256 parked,
# 744 refused 429) and 1,000 parked with the per-address limit off (the
# reserve's 503s beyond), each time with /healthz, /readyz, an acquire and
# a list answered meanwhile on fresh connections; the 429 and 503 answers
# in the documented shape with Retry-After; the counts going back down
# when waiters leave; per principal with --auth-file.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-http.sh"
. "$(dirname "$0")/lib-security.sh"
need_tools
EDGE="$TN_SRC/tests/tools/http/edge.py"

# park N NAME [edge.py args]: N blocking acquires of NAME on N connections,
# in the background until stop_park; PARK_OUT holds the tool's report.
# With --settle K it returns once K are answered (the refusals expected),
# so that this test's own connections come after every one was read.
park() {
    local n=$1 name=$2
    shift 2
    rm -f "$T/go"
    PARK_OUT=$T/park.$name.out
    python3 "$EDGE" park "$PORT" "$n" "$name" 120000 "$T/go" "$@" >"$PARK_OUT" 2>&1 &
    PARK_PID=$!
    TN_PIDS+=("$PARK_PID")
    for _ in $(seq 1 600); do
        grep -q '^sent' "$PARK_OUT" && return 0
        kill -0 "$PARK_PID" 2>/dev/null || fail "edge.py park: $(cat "$PARK_OUT")"
        sleep 0.1
    done
    fail "edge.py park never sent its $n requests"
}
stop_park() {
    touch "$T/go"
    wait "$PARK_PID" || fail "edge.py park failed: $(cat "$PARK_OUT")"
    PARK=$(tail -1 "$PARK_OUT")
}
# others_served WHAT: fresh clients get /healthz, /readyz, an acquire and a
# list answered, each within 5 s.
others_served() {
    local c
    CURL_MAX=5
    for p in /healthz /readyz /v1/leases; do
        rq GET "$p" - ""
        expect_code 200 "GET $p while $1"
    done
    acquire "other:$RANDOM" o 1000
    expect_code 201 "an acquire while $1"
    CURL_MAX=10
}
hold() {
    acquire "$1" holder 600000 "${2-}"
    expect_code 201 "holding $1"
}

# --- defaults: 1,000 waiters from one address.
tn_start_server
hold w:busy
park 1000 w:busy --settle 744
others_served "1,000 blocking acquires were sent"
tn_wait_metric tenure_waiters 256 "256 waiters (--max-waiters-per-address)"
acquire w:busy late 10000 '"wait_ms":60000'
expect_error 429 too_many_requests "the 1,001st blocking acquire from 127.0.0.1"
case $(jget message) in *--max-waiters-per-address*) ;; *) fail "429 without the option's name: $BODY" ;; esac
grep -qi '^retry-after: [1-9]' <<<"$HDRS" || fail "429 without Retry-After: $HDRS"
stop_park
echo "defaults: $PARK"
# (closed: idle refused connections the server evicted for this test's
# own requests at the cap, each already answered.)
case $PARK in "refused=744 statuses=429:744 "*) ;; *) fail "1,000 waiters at the defaults: expected 744 refused 429, got $PARK" ;; esac
[ "$(metric 'tenure_capacity_refused_total{limit="waiters_per_address"}')" = 745 ] ||
    fail "tenure_capacity_refused_total{limit=\"waiters_per_address\"}: $(metric 'tenure_capacity_refused_total{limit="waiters_per_address"}')"
# The waiters left (closed): their address's count goes back to 0.
tn_wait_metric tenure_waiters 0 "no waiters after they left"
acquire w:busy again 10000 '"wait_ms":300'
expect_error 409 held "a blocking acquire once the others left (wait_ms ran out)"
pass "defaults: 256 parked, 744 refused 429, health, reads and acquires served"
tn_kill_server

# --- 1,000 parked, the per-address limit off: the reserve keeps room.
PORT=""
TN_DATA_DIR=$T/data2 tn_start_server --max-connections 1100 --max-waiters-per-address 0 --max-waiters-per-name 2000
hold w:busy
park 1100 w:busy --settle 100
tn_wait_metric tenure_waiters 1000 "1,000 waiters (1,100 connections minus 100 reserved)"
others_served "1,000 waiters were parked"
acquire w:busy late 10000 '"wait_ms":60000'
expect_error 503 capacity "a blocking acquire beyond the reserve"
case $(jget message) in *--reserved-connections*) ;; *) fail "503 without the option's name: $BODY" ;; esac
grep -qi '^retry-after: [1-9]' <<<"$HDRS" || fail "503 without Retry-After: $HDRS"
rq GET /v1/events - ""
expect_error 503 capacity "an event stream beyond the reserve"
stop_park
echo "reserve: $PARK"
case $PARK in "refused=100 statuses=503:100 "*) ;; *) fail "1,100 waiters, room for 1,000: $PARK" ;; esac
pass "1,000 parked: health, reads and acquires served; beyond the reserve 503"
tn_kill_server

# --- per principal, with authentication.
sec_write_auth "$T/auth.json"
PORT=""
TN_DATA_DIR=$T/data3 tn_start_server --auth-file "$T/auth.json" --max-waiters-per-principal 3 \
    --max-waiters-per-address 0
rq POST /v1/leases application/json '{"name":"shard:busy","owner_id":"h","ttl_ms":600000}' \
    -H "Authorization: Bearer $TOK_INDEXER"
expect_code 201 "holding shard:busy"
park 5 shard:busy --bearer "$TOK_INDEXER" --settle 2
for _ in $(seq 1 500); do
    w=$(curl -s -H "Authorization: Bearer $TOK_OPS" "$URL/metrics" | awk '$1 == "tenure_waiters" {print $2}')
    [ "$w" = 3 ] && break
    sleep 0.02
done
[ "$w" = 3 ] || fail "the server never had 3 waiters of indexer: $w"
rq POST /v1/leases application/json '{"name":"shard:busy","owner_id":"o","ttl_ms":1000,"wait_ms":300}' \
    -H "Authorization: Bearer $TOK_INDEXER"
expect_error 429 too_many_requests "indexer's fourth blocking acquire"
case $BODY in *--max-waiters-per-principal*) ;; *) fail "429 without the option's name: $BODY" ;; esac
rq POST /v1/leases application/json '{"name":"shard:busy","owner_id":"o","ttl_ms":1000,"wait_ms":300}' \
    -H "Authorization: Bearer $TOK_OTHER"
expect_error 409 held "another principal's blocking acquire (it waited)"
stop_park
echo "per principal: $PARK"
case $PARK in "refused=2 statuses=429:2 "*) ;; *) fail "5 waiters of one principal, 3 allowed: $PARK" ;; esac
pass "per principal: the fourth blocking acquire 429, other principals wait"
