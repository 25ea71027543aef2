#!/usr/bin/env bash
# Clients that pipeline large answers and never read, together: each
# connection alone is bounded (--max-pipeline requests ahead, not read
# while its answers cannot be written), but many of them would together
# hold gigabytes of unsent answers (500 such connections listing 1,000
# leases: 1.1 GB RSS after 8 s and growing).  --reply-buffer-total-bytes
# bounds them all: past it, the connections whose client does not read are
# closed, most unsent bytes first (tenure_http_slow_readers_closed_total).
# Here 40 connections list 100 leases with long names (about 28 KB an
# answer) under a 512 KiB total (each holds up to about 90 KB unsent: a
# pump starts no more requests once its replies pass 64 KiB, and the
# socket takes the rest): the unsent bytes (the gauge
# tenure_http_reply_buffered_bytes) must never be seen above it, some
# connections must be closed, and acquires on fresh connections must be
# answered meanwhile.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-http.sh"
need_tools
BUDGET=524288
tn_start_server --reply-buffer-total-bytes "$BUDGET"
metric() { curl -s --max-time 5 "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

pad=$(printf 'x%.0s' $(seq 1 180))
for i in $(seq 1 100); do
    acquire "sr/$pad$i" o 600000
    expect_code 201 "seed acquire $i"
done

python3 "$ATTACK" pipeline-flood "$PORT" 40 "$T/stop" \
    --target "/v1/leases?prefix=sr/&limit=1000" >"$T/flood.out" 2>&1 &
flood_pid=$!
TN_PIDS+=("$flood_pid")
sleep 1

seen_max=0
codes=()
for i in $(seq 1 12); do
    g=$(metric tenure_http_reply_buffered_bytes)
    [ -n "$g" ] || fail "no tenure_http_reply_buffered_bytes on /metrics"
    [ "$g" -gt "$seen_max" ] && seen_max=$g
    [ "$g" -le "$BUDGET" ] ||
        fail "unsent reply bytes $g over --reply-buffer-total-bytes $BUDGET"
    if [ $((i % 3)) = 0 ]; then
        code=$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' \
            -H 'Content-Type: application/json' \
            -d "{\"name\":\"sr-probe:$i\",\"owner_id\":\"g\",\"ttl_ms\":60000}" \
            "$URL/v1/leases" || true)
        codes+=("$code")
    fi
    sleep 0.25
done
touch "$T/stop"
wait "$flood_pid" || fail "attack.py pipeline-flood failed: $(cat "$T/flood.out")"
kill -0 "$SERVER_PID" 2>/dev/null || fail "tenured died under the flood"
closed=$(metric tenure_http_slow_readers_closed_total)
echo "flood: $(cat "$T/flood.out"); unsent bytes seen at most $seen_max; slow readers closed $closed; probes ${codes[*]}"
[ "${closed:-0}" -ge 1 ] || fail "no connection was closed over the reply total"
for c in "${codes[@]}"; do
    [ "$c" = 201 ] || fail "an acquire beside the flood: HTTP $c (${codes[*]})"
done
pass "40 non-reading pipelining clients: unsent replies held under $BUDGET bytes (at most $seen_max seen), $closed connections closed, 4 of 4 acquires answered"
