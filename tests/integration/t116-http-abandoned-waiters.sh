#!/usr/bin/env bash
# 1,000 blocking acquires (wait_ms of two minutes) on a held name whose
# clients then disconnect: each is cancelled as soon as its connection is
# seen closed, so tenure_waiters returns to 0 within seconds (not after
# wait_ms), no server socket is left in CLOSE-WAIT, and when the holder
# releases, no abandoned waiter is granted the name.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-http.sh"
need_tools

N=${TN_WAITERS:-1000}
WAIT_MS=120000
BOUND_MS=${TN_WAITER_BOUND_MS:-10000} # far below WAIT_MS: "at once", loaded machine
# Room for the waiters and this test's own requests (the cap has t105;
# the reserve and the per-client limits have t122).
tn_start_server --max-connections $((N + 100)) --max-waiters-per-name "$N" \
    --max-waiters-per-address 0

acquire "w:busy" holder 600000
expect_code 201 "the holder's lease"
htok=$(jget token)
hsec=$(jget lease_secret)

python3 "$ATTACK" wait-abandon "$PORT" "$N" "w:busy" "$WAIT_MS" "$T/go" >"$T/wait.out" 2>&1 &
wpid=$!
TN_PIDS+=("$wpid")
for _ in $(seq 1 600); do
    grep -q '^sent' "$T/wait.out" && break
    kill -0 "$wpid" 2>/dev/null || fail "attack.py wait-abandon: $(cat "$T/wait.out")"
    sleep 0.1
done
tn_wait_metric tenure_waiters "$N" "$N waiters"
echo "$N waiters parked on w:busy"

touch "$T/go"
wait "$wpid" || fail "attack.py wait-abandon failed: $(cat "$T/wait.out")"
start=$(now_ms)
w="" cw=""
while [ $(($(now_ms) - start)) -lt "$BOUND_MS" ]; do
    w=$(metric tenure_waiters)
    cw=$(close_wait_on "$PORT")
    [ "$w" = 0 ] && [ "$cw" = 0 ] && break
    sleep 0.1
done
took=$(($(now_ms) - start))
echo "after the clients closed: tenure_waiters $w, CLOSE-WAIT sockets $cw, after $took ms"
[ "$w" = 0 ] || fail "tenure_waiters is $w, $BOUND_MS ms after all $N waiting clients disconnected (wait_ms $WAIT_MS)"
[ "$cw" = 0 ] || fail "$cw server sockets in CLOSE-WAIT $BOUND_MS ms after all $N waiting clients disconnected"
pass "$N abandoned waiters cancelled and their sockets closed within $took ms"

release "w:busy" "$htok" "$hsec"
expect_code 204 "the holder releases"
sleep 0.2
get_lease "w:busy"
[ "$CODE" = 404 ] || fail "an abandoned waiter was granted w:busy after the release: $CODE $BODY"
acquire "w:busy" fresh 1000
expect_code 201 "a fresh acquire of the released name"
pass "no abandoned waiter took the name; a fresh client did"
