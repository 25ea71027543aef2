#!/usr/bin/env bash
# Pipelining clients that never read: 20 connections write pipelined
# GET /v1/leases requests (answered at once, no commit) as fast as their
# sockets take them and never read an answer.  Each connection is served
# at most --max-pipeline requests per loop turn, and not read while its
# answers cannot be written, so meanwhile requests of other clients on
# fresh connections are answered, and the server's memory stays bounded
# (checked where RSS measures it: not under AddressSanitizer).
# The probes' latency is printed, not asserted (a bound of 5 s only tells
# "answered" from "starved": the flood kept every probe unanswered before).
# in the dev stage too: the memory bound is checked only without AddressSanitizer.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-http.sh"
need_tools
tn_start_server

# A few leases, so each list answer has something to say.
for i in 1 2 3 4 5; do
    acquire "flood:seed:$i" o 600000
    expect_code 201 "seed acquire $i"
done
rss0=$(rss_kib "$SERVER_PID")

python3 "$ATTACK" pipeline-flood "$PORT" 20 "$T/stop" >"$T/flood.out" 2>&1 &
flood_pid=$!
TN_PIDS+=("$flood_pid")
sleep 2

codes=()
lat=()
rss_max=$rss0
for i in $(seq 1 8); do
    out=$(curl -s -o /dev/null --max-time 5 -w '%{http_code} %{time_total}' \
        -H 'Content-Type: application/json' \
        -d "{\"name\":\"flood:probe:$i\",\"owner_id\":\"g\",\"ttl_ms\":60000}" \
        "$URL/v1/leases" || true)
    codes+=("${out%% *}")
    lat+=("$(awk -v s="${out##* }" 'BEGIN { printf "%.0f", s * 1000 }')")
    r=$(rss_kib "$SERVER_PID")
    [ "$r" -gt "$rss_max" ] && rss_max=$r
    sleep 0.25
done
touch "$T/stop"
wait "$flood_pid" || fail "attack.py pipeline-flood failed: $(cat "$T/flood.out")"
echo "beside the flood ($(cat "$T/flood.out")): codes ${codes[*]}, latency ms ${lat[*]}; RSS ${rss0} KiB before, at most ${rss_max} KiB during"
kill -0 "$SERVER_PID" 2>/dev/null || fail "tenured died under the pipeline flood"

for i in $(seq 0 7); do
    [ "${codes[$i]}" = 201 ] ||
        fail "acquire $((i + 1)) beside 20 pipelining clients that never read: HTTP ${codes[$i]} (codes ${codes[*]})"
done
pass "8 of 8 acquires on fresh connections answered beside 20 pipelining clients (ms: ${lat[*]})"

# AddressSanitizer's shadow memory and its quarantine of freed blocks (the
# flood allocates and frees fast) make the RSS of an instrumented build no
# measure of tenured's own memory: there the bound is left out.
libs=$(ldd "$TN_BIN/tenured" 2>/dev/null || true)
if grep -q libasan <<<"$libs"; then
    echo "# tenured is built with AddressSanitizer: RSS bound not checked ($rss0 -> $rss_max KiB)"
else
    [ "$rss_max" -le $((rss0 + 100 * 1024)) ] ||
        fail "RSS grew from $rss0 KiB to $rss_max KiB under the flood: answers nobody reads are piling up"
    pass "RSS stayed within 100 MiB of its start under the flood ($rss0 -> $rss_max KiB)"
fi

acquire "flood:after" o 1000
expect_code 201 "acquire after the flood"
pass "normal service afterwards"
