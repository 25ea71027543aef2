#!/usr/bin/env bash
# Blocking acquire (wait_ms): waiters are granted in arrival order; a
# waiter whose client disconnected is dropped and never holds the lease;
# the queue is bounded (503 capacity beyond); SIGTERM answers waiters with 503.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools
tn_start_server --max-waiters-per-name 4 --max-waiters 6

# Wait (bounded) until the server has queued N waiters: arrival order is
# what the test is about, so each waiter must be queued before the next
# one starts, however slow the machine is.
wait_waiters() { tn_wait_metric tenure_waiters "$1" "$1 waiters queued"; }

acquire "q:1" holder 60000
expect_code 201 "first holder"
tok=$(jget token)
sec=$(jget lease_secret)

# Four waiters in a known order, then one whose client gives up early.
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
    n=$((${n:-0} + 1))
    wait_waiters "$n"
done
# The queue holds 4: a fifth waiter is refused with 503 capacity at once.
acquire "q:1" extra 300 '"wait_ms":20000'
expect_error 503 capacity "fifth waiter on one name"
kill "$pid_gone" 2>/dev/null || true
wait "$pid_gone" 2>/dev/null || true
wait_waiters 3 # the departed waiter is cancelled at once, not at its turn

release "q:1" "$tok" "$sec"
expect_code 204 "release with four waiters queued"
for w in w1 w2 w3; do
    wait "$(eval echo "\$pid_$w")" || fail "waiter $w: curl failed"
    [ "$(cat "$T/$w.code")" = 201 ] || fail "waiter $w got $(cat "$T/$w.code"): $(cat "$T/$w.body")"
    BODY=$(cat "$T/$w.body")
    eval "tok_$w=$(jget token)"
done
# Arrival order is grant order: tokens increase w1 < w2 < w3, and the
# client that left never got a token in between.
[ "$tok_w1" -lt "$tok_w2" ] && [ "$tok_w2" -lt "$tok_w3" ] ||
    fail "waiters not granted in FIFO order: $tok_w1 $tok_w2 $tok_w3"
[ $((tok_w3 - tok_w1)) -eq 2 ] ||
    fail "a token was granted between w1 and w3 (to the departed waiter?): $tok_w1 .. $tok_w3"
metrics=$(curl -s "$URL/metrics")
grep -q 'tenure_waits_total{outcome="dropped"} 1' <<<"$metrics" ||
    fail "the departed waiter was not counted as dropped: $(curl -s "$URL/metrics" | grep waits)"
pass "waiters granted in arrival order; a departed waiter was skipped and never held the lease"

# SIGTERM while a client waits: it is answered 503, the server exits 0.
acquire "q:2" holder 60000
expect_code 201 "holder of q:2"
curl -s --max-time 10 -o "$T/drain.body" -w '%{http_code}' \
    -d '{"name":"q:2","owner_id":"late","ttl_ms":300,"wait_ms":60000}' \
    "$URL/v1/leases" >"$T/drain.code" &
dpid=$!
wait_waiters 1
kill -TERM "$SERVER_PID"
wait "$dpid" || fail "draining waiter: curl failed"
[ "$(cat "$T/drain.code")" = 503 ] || fail "waiter during drain got $(cat "$T/drain.code")"
wait "$SERVER_PID"
rc=$?
[ "$rc" = 0 ] || fail "tenured exited $rc after SIGTERM"
pass "SIGTERM answers waiting clients with 503 and exits 0"
