#!/usr/bin/env bash
# Capacity limits refuse cleanly: each of --max-leases, --max-names,
# --max-waiters-per-name, --max-waiters and --max-subscribers, once reached,
# answers 503 {"error":"capacity"} with Retry-After and counts the refusal
# in tenure_capacity_refused_total{limit=...}; what was granted before keeps
# working (renew, release, check); and once use drops below the limit the
# same request succeeds again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-capacity.sh"
need_tools

tn_start_server --max-leases 3 --max-names 100
for l in leases names waiters waiters_per_name subscribers; do
    [ "$(refused "$l")" = 0 ] || fail "counter of $l not exported as 0 at start"
done
capacity_leases

# --max-names on a server of its own, retiring names after 3 s.
tn_kill_server
SERVER_PID=
PORT=
rm -rf "$T/data"
tn_start_server --max-names 2 --max-waiters-per-name 1 --max-waiters 2 \
    --max-subscribers 1 --retain-ms 3000
capacity_names

# --max-waiters-per-name 1 and --max-waiters 2, on the two held names.
curl -s --max-time 20 -o /dev/null -d '{"name":"cap:n1","owner_id":"a","ttl_ms":5000,"wait_ms":15000}' "$URL/v1/leases" &
wa=$!
tn_wait_metric tenure_waiters 1 "1 waiter"
before=$(refused waiters_per_name)
acquire "cap:n1" b 5000 '"wait_ms":15000'
expect_capacity waiters_per_name "a second waiter on one name"
curl -s --max-time 20 -o /dev/null -d '{"name":"cap:n3","owner_id":"a","ttl_ms":5000,"wait_ms":15000}' "$URL/v1/leases" &
wb=$!
tn_wait_metric tenure_waiters 2 "2 waiters"
# Three names would pass --max-names: the third waiter must ask for a
# name the table holds, so ask again for cap:n3 on a server-wide count.
before=$(refused waiters)
before_pn=$(refused waiters_per_name)
acquire "cap:n3" b 5000 '"wait_ms":15000'
expect_error 503 capacity "a third waiter"
[ "$(refused waiters)" = $((before + 1)) ] || [ "$(refused waiters_per_name)" = $((before_pn + 1)) ] ||
    fail "the third waiter's refusal was not counted"
[ "$(refused waiters)" = $((before + 1)) ] ||
    fail "the third waiter was refused by the per-name limit, not --max-waiters (both reached; the total is checked first)"
renew "cap:n1" "$n1tok" "$n1sec"
expect_code 200 "the holder renews with waiters queued"
release "cap:n1" "$n1tok" "$n1sec"
expect_code 204 "release with a waiter queued"
wait "$wa" || true
tn_wait_metric tenure_waiters 1 "1 waiter after the grant"
curl -s --max-time 20 -o /dev/null -d '{"name":"cap:n1","owner_id":"c","ttl_ms":5000,"wait_ms":15000}' "$URL/v1/leases" &
wc=$!
tn_wait_metric tenure_waiters 2 "a waiter queued again"
kill "$wc" 2>/dev/null || true
wait "$wc" 2>/dev/null || true
pass "--max-waiters-per-name and --max-waiters: refused with 503 capacity, counted; the holder renews and releases; a waiter fits again after one was served"
kill "$wb" 2>/dev/null || true
wait "$wb" 2>/dev/null || true

# --max-subscribers 1.
curl -sN --max-time 10 "$URL/v1/events" >/dev/null &
ev=$!
tn_wait_subscribers 1
before=$(refused subscribers)
rq GET /v1/events - "" --max-time 2
expect_capacity subscribers "a second event stream"
kill "$ev" 2>/dev/null || true
wait "$ev" 2>/dev/null || true
tn_wait_subscribers 0
curl -sN --max-time 1 -o "$T/ev2" "$URL/v1/events" || true
grep -q subscribed "$T/ev2" || fail "a stream was refused after the first closed: $(cat "$T/ev2")"
pass "--max-subscribers: refused with 503 capacity, counted; a stream fits again after one closed"
