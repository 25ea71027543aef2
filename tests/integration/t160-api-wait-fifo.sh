#!/usr/bin/env bash
# runs: embedded pg
# Blocking acquire (wait_ms), on the store named by $1: waiters are granted
# in arrival order; a waiter whose client disconnected is dropped and never
# holds the lease; the queue is bounded (503 capacity beyond); a
# non-waiting acquire does not jump the queue; a waiter whose wait_ms
# passes gets the 409 a non-waiting acquire would; SIGTERM answers waiters
# with 503.  On PostgreSQL the release is made on another instance: the
# waiters' instance hears it (NOTIFY) and grants its first waiter at once;
# each next one gets the name when the expiry timer ends the grant before.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools
tn_use_store "${1:-embedded}"
tn_start_server --max-waiters-per-name 4 --max-waiters 6
RELEASE_URL=$URL
if [ "$STORE" = pg ]; then
    tn_server_start -i other -d "$T/data2" -l "$T/tenured2.log" || fail "$TN_SERVER_ERR"
    RELEASE_URL=${TN_SRV_URL[other]}
fi

# Wait (bounded) until the server has queued N waiters: arrival order is
# what the test is about, so each waiter must be queued before the next
# one starts, however slow the machine is.
wait_waiters() { tn_wait_metric tenure_waiters "$1" "$1 waiters queued"; }

acquire "q:1" holder 60000
expect_code 201 "first holder"
tok=$(jget token)
sec=$(jget lease_secret)

# Four waiters in a known order, then one whose client gives up early.
n=0
for w in w1 w2 gone w3; do
    if [ "$w" = gone ]; then
        # It leaves once the queue was seen full (killed below): a waiter
        # whose client leaves is cancelled at once, so a time-out here
        # would shrink the queue before the test looked at it.
        curl -s --max-time 20 -o /dev/null \
            -d "{\"name\":\"q:1\",\"owner_id\":\"$w\",\"ttl_ms\":300,\"wait_ms\":20000}" \
            "$URL/v1/leases" &
    else
        curl -s --max-time 20 -o "$T/$w.body" -w '%{http_code}' \
            -d "{\"name\":\"q:1\",\"owner_id\":\"$w\",\"ttl_ms\":300,\"wait_ms\":20000}" \
            "$URL/v1/leases" >"$T/$w.code" &
    fi
    eval "pid_$w=\$!"
    n=$((n + 1))
    wait_waiters "$n"
done
# The queue holds 4: a fifth waiter is refused with 503 capacity at once.
acquire "q:1" extra 300 '"wait_ms":20000'
expect_error 503 capacity "fifth waiter on one name"
# A non-waiting acquire is refused while others queue.
acquire "q:1" rude 300
expect_code 409 "non-waiting acquire with waiters queued"
kill "$pid_gone" 2>/dev/null || true
wait "$pid_gone" 2>/dev/null || true
wait_waiters 3 # the departed waiter is cancelled at once, not at its turn

URL=$RELEASE_URL release "q:1" "$tok" "$sec"
expect_code 204 "release with four waiters queued ($STORE)"
for w in w1 w2 w3; do
    wait "$(eval echo "\$pid_$w")" || fail "waiter $w: curl failed"
    [ "$(cat "$T/$w.code")" = 201 ] || fail "waiter $w got $(cat "$T/$w.code"): $(cat "$T/$w.body")"
    BODY=$(cat "$T/$w.body")
    eval "tok_$w=$(jget token)"
done
# Arrival order is grant order: tokens increase w1 < w2 < w3, and the
# client that left never got a grant in between (each waiter's 300 ms
# lease expires and the expiry timer hands the name to the next).
[ "$tok_w1" -lt "$tok_w2" ] && [ "$tok_w2" -lt "$tok_w3" ] ||
    fail "waiters not granted in FIFO order: $tok_w1 $tok_w2 $tok_w3"
rj GET "/v1/leases/q:1/history"
owners=$(for i in 0 1 2 3; do printf '%s' "$BODY" | "$TN_BIN/tn-json-get" "grants.$i.owner_id"; printf ' '; done)
[ "$owners" = "w3 w2 w1 holder " ] || fail "grants of q:1 (newest first): $owners: $BODY"
if [ "$STORE" = embedded ]; then
    # One sequence, nothing else granted meanwhile: no token in between.
    [ $((tok_w3 - tok_w1)) -eq 2 ] ||
        fail "a token was granted between w1 and w3 (to the departed waiter?): $tok_w1 .. $tok_w3"
fi
metrics=$(curl -s "$URL/metrics")
grep -q 'tenure_waits_total{outcome="dropped"} 1' <<<"$metrics" ||
    fail "the departed waiter was not counted as dropped: $(grep waits <<<"$metrics")"
pass "waiters granted in arrival order; a departed waiter was skipped and never held the lease ($STORE)"

# A wait that runs out is answered as the non-waiting acquire would be.
acquire "q:2" holder 60000
t0=$(date +%s%N)
acquire "q:2" late 300 '"wait_ms":400'
el=$((($(date +%s%N) - t0) / 1000000))
expect_error 409 held "wait_ms ran out"
[ "$el" -ge 350 ] || fail "answered after $el ms, before wait_ms"
[ "$(jget holder.owner_id)" = holder ] || fail "holder in the 409: $BODY"
pass "a waiter whose wait_ms passes gets 409 held"

# SIGTERM while a client waits: it is answered 503, the server exits 0.
acquire "q:3" holder 60000
expect_code 201 "holder of q:3"
curl -s --max-time 10 -o "$T/drain.body" -w '%{http_code}' \
    -d '{"name":"q:3","owner_id":"late","ttl_ms":300,"wait_ms":60000}' \
    "$URL/v1/leases" >"$T/drain.code" &
dpid=$!
wait_waiters 1
kill -TERM "$SERVER_PID"
wait "$dpid" || fail "draining waiter: curl failed"
[ "$(cat "$T/drain.code")" = 503 ] || fail "waiter during drain got $(cat "$T/drain.code")"
tn_server_stop main TERM
[ "$TN_SERVER_RC" = 0 ] || fail "tenured exited $TN_SERVER_RC after SIGTERM"
pass "SIGTERM answers waiting clients with 503 and exits 0"
