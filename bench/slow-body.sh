#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How long a normal acquire on a fresh connection waits while SLOW
# connections (default 1100) send the head of an acquire and then its body
# at one byte per second, each reconnecting as soon as the server closes
# it (tests/tools/http/attack.py slowbody; the test of the same attack is
# tests/integration/t113-http-slow-body.sh).  tenured runs with its default
# options (a cap of 1000 connections, a request deadline of 30 s).  After
# WARMUP seconds it sends PROBES acquires (default 20), one every 0.5 s,
# each on a new connection with a 10 s limit, and prints their latencies,
# the median, the largest, and how many took longer than 1 s (the goal:
# none) or got no 201 (counted as 10 s in the median).
# Environment: SLOW (1100), PROBES (20), WARMUP (8), RAMP (new slow
# clients per 50 ms while they connect, 10), TENURED (a binary;
# default build/bench/bin/tenured, else build/dev/bin/tenured).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SLOW=${SLOW:-1100}
PROBES=${PROBES:-20}
WARMUP=${WARMUP:-8}
WORK=$(mktemp -d /tmp/tenure-bench-slow.XXXXXX)
. "$(dirname "$0")/lib.sh" # PIDS, cleanup at exit
bench_tenured "$ROOT"

tn_server_start -d "$WORK/data" -l "$WORK/tenured.log" ||
    { echo "slow-body: $TN_SERVER_ERR" >&2; exit 1; }
port=${TN_SRV_PORT[main]} url=${TN_SRV_URL[main]}

secs=$((WARMUP + PROBES / 2 + 5))
python3 "$ROOT/tests/tools/http/attack.py" slowbody "$port" "$SLOW" "$secs" \
    --ramp "${RAMP:-10}" --out "$WORK/slow.stat" >"$WORK/slow.out" 2>&1 &
PIDS+=("$!")
sleep "$WARMUP"
echo "== $SLOW slow-body clients: $(cat "$WORK/slow.stat" 2>/dev/null)"
lat=()
raw=()
bad=0
for i in $(seq 1 "$PROBES"); do
    out=$(curl -s -o /dev/null --max-time 10 -w '%{http_code} %{time_total}' \
        -H 'Content-Type: application/json' \
        -d "{\"name\":\"probe:$i\",\"owner_id\":\"p\",\"ttl_ms\":60000}" "$url/v1/leases" || true)
    ms=$(awk -v s="${out##* }" 'BEGIN { printf "%.0f", s * 1000 }')
    raw+=("${out%% *}:$ms")
    # No 201 counts as the 10 s limit, whenever it failed.
    [ "${out%% *}" = 201 ] || { bad=$((bad + 1)); ms=10000; }
    lat+=("$ms")
    sleep 0.5
done
echo "== probes, status:ms (000: no answer, the connection dropped or the 10 s limit): ${raw[*]}"
printf '%s\n' "${lat[@]}" | sort -n | awk -v bad="$bad" -v n="$PROBES" -v slow="$SLOW" '
    { a[NR] = $1; if ($1 > 1000) over++ }
    END { printf "slow_clients=%d probes=%d median_ms=%d max_ms=%d over_1s=%d not_201=%d\n",
          slow, n, a[int((NR + 1) / 2)], a[NR], over, bad }'
