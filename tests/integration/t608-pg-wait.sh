#!/usr/bin/env bash
# Blocking acquire (wait_ms) on the PostgreSQL store: waiters on one
# instance are granted in arrival order; a waiter whose client
# disconnected is dropped and never holds the lease; the queue is bounded
# (503 capacity beyond); a non-waiting acquire does not jump the queue; a release
# made on another instance wakes a waiter at once (NOTIFY), an expiry by
# the holder's expiry timer; a waiter whose wait_ms passes gets the 409.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need
pg_fresh_schema t608
pg_start_instance 1 "$PG_URL" --max-waiters-per-name 4 --max-waiters 6
pg_start_instance 2 "$PG_URL"
URL=${URLS[1]}

acquire "q:1" holder 60000
expect_code 201 "first holder"
tok=$(jget token)
sec=$(jget lease_secret)

# Four waiters in a known order, then one whose client gives up early.
for w in w1 w2 gone w3; do
    if [ "$w" = gone ]; then
        curl -s --max-time 0.5 -o /dev/null \
            -d "{\"name\":\"q:1\",\"owner_id\":\"$w\",\"ttl_ms\":300,\"wait_ms\":20000}" \
            "$URL/v1/leases" &
    else
        curl -s --max-time 20 -o "$T/$w.body" -w '%{http_code}' \
            -d "{\"name\":\"q:1\",\"owner_id\":\"$w\",\"ttl_ms\":300,\"wait_ms\":20000}" \
            "$URL/v1/leases" >"$T/$w.code" &
    fi
    eval "pid_$w=\$!"
    sleep 0.15
done
# The queue holds 4: a fifth waiter is refused with 503 capacity at once.
acquire "q:1" extra 300 '"wait_ms":20000'
expect_error 503 capacity "fifth waiter on one name"
# A non-waiting acquire is refused while others queue.
acquire "q:1" rude 300
expect_code 409 "non-waiting acquire with waiters queued"
wait "$pid_gone" 2>/dev/null || true
sleep 0.2

# Released on instance 2: instance 1 hears it and grants its first waiter.
URL=${URLS[2]}
release "q:1" "$tok" "$sec"
expect_code 204 "release on the other instance with four waiters queued"
URL=${URLS[1]}
for w in w1 w2 w3; do
    wait "$(eval echo "\$pid_$w")" || fail "waiter $w: curl failed"
    [ "$(cat "$T/$w.code")" = 201 ] || fail "waiter $w got $(cat "$T/$w.code"): $(cat "$T/$w.body")"
    BODY=$(cat "$T/$w.body")
    eval "tok_$w=$(jget token)"
done
# Arrival order is grant order: w1 < w2 < w3, and the client that left
# never got a token in between (each waiter's 300 ms lease expires and the
# expiry timer hands the name to the next).
[ "$tok_w1" -lt "$tok_w2" ] && [ "$tok_w2" -lt "$tok_w3" ] ||
    fail "waiters not granted in FIFO order: $tok_w1 $tok_w2 $tok_w3"
rj GET "/v1/leases/q:1/history"
owners=$(for i in 0 1 2 3; do printf '%s' "$BODY" | "$TN_BIN/tn-json-get" "grants.$i.owner_id"; printf ' '; done)
[ "$owners" = "w3 w2 w1 holder " ] || fail "grants of q:1 (newest first): $owners: $BODY"
metrics=$(curl -s "$URL/metrics")
grep -q 'tenure_waits_total{outcome="dropped"} 1' <<<"$metrics" ||
    fail "the departed waiter was not counted as dropped: $(curl -s "$URL/metrics" | grep waits)"
pass "waiters granted in arrival order, woken by another instance's release; a departed waiter never held the lease"

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
sleep 0.3
kill -TERM "${PIDS[1]}"
wait "$dpid" || fail "draining waiter: curl failed"
[ "$(cat "$T/drain.code")" = 503 ] || fail "waiter during drain got $(cat "$T/drain.code")"
rc=0
wait "${PIDS[1]}" || rc=$?
pg_forget_pid "${PIDS[1]}"
[ "$rc" = 0 ] || fail "tenured exited $rc after SIGTERM"
pass "SIGTERM answers waiting clients with 503 and exits 0"
