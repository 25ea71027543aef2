#!/usr/bin/env bash
# Slow bodies: 1,100 connections send the head of an acquire and then its
# body at one byte per second (never the last byte), each reconnecting as
# soon as the server closes it.  With the default options (a connection
# cap of 1000 and a request deadline of 30 s) a normal acquire on a fresh
# connection is answered meanwhile, and the request deadline (first byte
# of a request to its last) closes every slow connection in time.
# The latency of those acquires is printed; the goal for it (within 1 s)
# is measured by bench/slow-body.sh, not asserted here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-http.sh"
need_tools

TIMEOUT_MS=30000 # tenured's default --request-timeout-ms
SLACK_MS=${SLACK_MS:-5000}
N=${TN_SLOW_CONNS:-1100}
SECS=${TN_SLOW_SECS:-42}
# The default options: the slow clients alone are over the connection cap.
tn_start_server

python3 "$ATTACK" slowbody "$PORT" "$N" "$SECS" --timeout-ms $((TIMEOUT_MS + SLACK_MS)) --ramp 10 \
    --out "$T/slow.stat" >"$T/slow.out" 2>&1 &
slow_pid=$!
TN_PIDS+=("$slow_pid")

# Let all of them connect and start their bodies.
sleep 8
echo "slow clients after 8 s: $(cat "$T/slow.stat" 2>/dev/null)"

# Twenty acquires, each on a fresh connection, two a second.
PROBES=20
lat=()
codes=()
for i in $(seq 1 $PROBES); do
    out=$(curl -s -o /dev/null --max-time 10 -w '%{http_code} %{time_total}' \
        -H 'Content-Type: application/json' \
        -d "{\"name\":\"good:$i\",\"owner_id\":\"g\",\"ttl_ms\":60000}" \
        "$URL/v1/leases" || true)
    codes+=("${out%% *}")
    lat+=("$(awk -v s="${out##* }" 'BEGIN { printf "%.0f", s * 1000 }')")
    sleep 0.5
done
echo "acquires beside $N slow bodies: codes ${codes[*]}, latency ms ${lat[*]} (goal: within 1000 ms; bench/slow-body.sh)"

wait "$slow_pid" || fail "attack.py slowbody failed: $(cat "$T/slow.out")"
res=$(cat "$T/slow.out")
echo "slow clients: $res"
kill -0 "$SERVER_PID" 2>/dev/null || fail "tenured died under the slow bodies"
val() { sed -n "s/.*\<$1=\([0-9]*\).*/\1/p" <<<"$res"; }
[ "$(val closed)" -ge "$N" ] ||
    fail "only $(val closed) slow-body connections were closed in $SECS s (of $N, deadline $TIMEOUT_MS ms): $res"
[ "$(val max_life_ms)" -le $((TIMEOUT_MS + SLACK_MS)) ] ||
    fail "a slow-body connection lived $(val max_life_ms) ms, past the $TIMEOUT_MS ms request deadline: $res"
[ "$(val open_now)" = 0 ] ||
    fail "$(val open_now) slow-body connections were still open past the $TIMEOUT_MS ms request deadline: $res"
pass "every slow-body connection was closed by the request deadline (longest $(val max_life_ms) ms)"

for i in $(seq 0 $((PROBES - 1))); do
    [ "${codes[$i]}" = 201 ] ||
        fail "acquire $((i + 1)) beside $N slow bodies: HTTP ${codes[$i]} after ${lat[$i]} ms (codes ${codes[*]})"
done
pass "$PROBES of $PROBES acquires on fresh connections answered beside $N slow bodies (ms: ${lat[*]})"
