#!/usr/bin/env bash
# Capacity limits refuse cleanly: each of --max-leases, --max-names,
# --max-waiters-per-name, --max-waiters and --max-subscribers, once reached,
# answers 503 {"error":"capacity"} with Retry-After and counts the refusal
# in tenure_capacity_refused_total{limit=...}; what was granted before keeps
# working (renew, release, check); and once use drops below the limit the
# same request succeeds again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools

# refused LIMIT: the counter of LIMIT now.
refused() {
    curl -s --max-time 5 "$URL/metrics" |
        awk -v l="tenure_capacity_refused_total{limit=\"$1\"}" '$1 == l {print $2}'
}

# expect_capacity LIMIT WHAT: the last answer was the capacity refusal of
# LIMIT, with Retry-After, and the counter moved from $before.
expect_capacity() {
    expect_error 503 capacity "$2"
    printf '%s\n' "$HDRS" | grep -qi '^Retry-After: [1-9]' ||
        fail "$2: no Retry-After header in: $HDRS"
    jget message | grep -q -- "--max-$(printf '%s' "$1" | tr _ -)" ||
        fail "$2: the message does not name --max-$1: $BODY"
    [ "$(refused "$1")" = $((before + 1)) ] ||
        fail "$2: tenure_capacity_refused_total{limit=\"$1\"} is $(refused "$1"), want $((before + 1))"
}

tn_start_server --max-leases 3 --max-names 100
for l in leases names waiters waiters_per_name subscribers; do
    [ "$(refused "$l")" = 0 ] || fail "counter of $l not exported as 0 at start"
done

# --max-leases 3: three live leases, the fourth grant is refused.
for i in 1 2 3; do
    acquire "cap:l$i" o 60000
    expect_code 201 "live lease $i"
    eval "tok$i=\$(jget token) sec$i=\$(jget lease_secret)"
done
before=$(refused leases)
acquire "cap:l4" o 60000
expect_capacity leases "a fourth live lease"
get_lease "cap:l4"
expect_code 404 "the refused grant changed nothing"
# What was granted is unaffected: renew, check, a held name's 409.
renew "cap:l1" "$tok1" "$sec1" 60000
expect_code 200 "renew at the limit"
check_token "cap:l2" "$tok2"
expect_field current true "check at the limit"
acquire "cap:l2" other 60000
expect_code 409 "a held name still answers held, not capacity"
# Released: one below the limit, the grant succeeds.
release "cap:l3" "$tok3" "$sec3"
expect_code 204 "release at the limit"
acquire "cap:l4" o 60000
expect_code 201 "a grant after the count dropped"
tok4=$(jget token) sec4=$(jget lease_secret)
pass "--max-leases: refused with 503 capacity and Retry-After, counted; renew, check, release unaffected; left again after a release"

# Expiry counts too: a short lease that runs out frees its place.
release "cap:l4" "$tok4" "$sec4"
acquire "cap:l5" o 3000
expect_code 201 "a short lease"
before=$(refused leases)
acquire "cap:l6" o 60000
expect_capacity leases "over the limit while the short lease lives"
for _ in $(seq 1 200); do
    acquire "cap:l6" o 60000
    [ "$CODE" = 201 ] && break
    expect_error 503 capacity "refused until the short lease expires"
    sleep 0.05
done
expect_code 201 "a grant once the short lease expired"
pass "--max-leases: an expired lease no longer counts"

# --max-names on a server of its own, retiring names after 3 s.
tn_kill_server
SERVER_PID=
PORT=
rm -rf "$T/data"
tn_start_server --max-names 2 --max-waiters-per-name 1 --max-waiters 2 \
    --max-subscribers 1 --retain-ms 3000
acquire "cap:n1" o 60000
expect_code 201 "name 1"
n1tok=$(jget token) n1sec=$(jget lease_secret)
acquire "cap:n2" o 60000
expect_code 201 "name 2"
n2tok=$(jget token) n2sec=$(jget lease_secret)
before=$(refused names)
acquire "cap:n3" o 60000
expect_capacity names "a third name"
# A name the table holds is granted again at the limit: it is no new name.
release "cap:n2" "$n2tok" "$n2sec"
expect_code 204 "release name 2"
acquire "cap:n2" o 60000
expect_code 201 "a known name at the names limit"
n2tok=$(jget token) n2sec=$(jget lease_secret)
release "cap:n2" "$n2tok" "$n2sec"
# Once cap:n2 is retired (3 s after its release), a new name fits again.
for _ in $(seq 1 300); do
    acquire "cap:n3" o 60000
    [ "$CODE" = 201 ] && break
    expect_error 503 capacity "refused until a name is retired"
    sleep 0.05
done
expect_code 201 "a new name after a name was retired"
renew "cap:n1" "$n1tok" "$n1sec"
expect_code 200 "the first name renews throughout"
pass "--max-names: refused with 503 capacity, counted; known names still granted; left again after a retirement"

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
