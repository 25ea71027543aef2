#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How long GET /healthz and an acquire on a fresh connection wait while
# FLOOD connections (default 500) pipeline expensive lists and never read
# an answer, each reconnecting as soon as the server closes it
# (tests/tools/http/attack.py pipeline-flood; the test of the same attack
# is tests/integration/t119-http-slow-readers.sh).  The server holds
# LEASES leases (default 1000) with 200-byte names, so each list answer is
# about 280 KB.  tenured runs with its defaults plus TENURED_ARGS.  After
# WARMUP seconds it sends PROBES probes (default 20), one every 0.5 s, each
# on a new connection with a 30 s limit, alternating /healthz and an
# acquire, and prints their latencies, the median, the largest, and how
# many took longer than 1 s or got no answer (counted as 30 s).
# READ=1: the flood connections read (and drop) every answer as fast as it
# comes, so the server is busy building lists all along.
# Environment: FLOOD (500), LEASES (1000), PROBES (20), WARMUP (5), READ,
# TENURED_ARGS, TENURED (a binary; default build/bench/bin/tenured, else
# build/dev/bin/tenured).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
FLOOD=${FLOOD:-500}
LEASES=${LEASES:-1000}
PROBES=${PROBES:-20}
WARMUP=${WARMUP:-5}
WORK=$(mktemp -d /tmp/tenure-bench-flood.XXXXXX)
. "$(dirname "$0")/lib.sh" # PIDS, cleanup at exit
bench_tenured "$ROOT"

# shellcheck disable=SC2086 # TENURED_ARGS is split on purpose
tn_server_start -d "$WORK/data" -l "$WORK/tenured.log" -- ${TENURED_ARGS:-} ||
    { echo "list-flood: $TN_SERVER_ERR" >&2; exit 1; }
port=${TN_SRV_PORT[main]} url=${TN_SRV_URL[main]} tpid=${TN_SRV_PID[main]}

pad=$(printf 'x%.0s' $(seq 1 190))
# One curl, many requests: the leases the flood lists.
seq 1 "$LEASES" | awk -v u="$url" -v pad="$pad" '{
    printf "next\nurl = \"%s/v1/leases\"\nheader = \"Content-Type: application/json\"\n", u
    printf "data = \"{\\\"name\\\":\\\"p/%s%06d\\\",\\\"owner_id\\\":\\\"o\\\",\\\"ttl_ms\\\":3600000}\"\n", pad, $1
    printf "output = /dev/null\n" }' | sed 1d >"$WORK/curl.cfg"
curl -s -K "$WORK/curl.cfg"
size=$(curl -s "$url/v1/leases?prefix=p/&limit=1000" | wc -c)
echo "== one list answer: $size bytes"

python3 "$ROOT/tests/tools/http/attack.py" pipeline-flood "$port" "$FLOOD" "$WORK/stop" \
    --target '/v1/leases?prefix=p/&limit=1000' ${READ:+--read} >"$WORK/flood.out" 2>&1 &
PIDS+=("$!")
sleep "$WARMUP"
c0=$(ticks "$tpid")
lat=()
raw=()
bad=0
for i in $(seq 1 "$PROBES"); do
    if [ $((i % 2)) = 1 ]; then
        out=$(curl -s -o /dev/null --max-time 30 -w '%{http_code} %{time_total}' "$url/healthz" || true)
        want=200
    else
        out=$(curl -s -o /dev/null --max-time 30 -w '%{http_code} %{time_total}' \
            -H 'Content-Type: application/json' \
            -d "{\"name\":\"probe:$i\",\"owner_id\":\"p\",\"ttl_ms\":60000}" "$url/v1/leases" || true)
        want=201
    fi
    ms=$(awk -v s="${out##* }" 'BEGIN { printf "%.0f", s * 1000 }')
    raw+=("${out%% *}:$ms")
    [ "${out%% *}" = "$want" ] || { bad=$((bad + 1)); ms=30000; }
    lat+=("$ms")
    sleep 0.5
done
c1=$(ticks "$tpid")
touch "$WORK/stop"
sleep 1.5
echo "== $(cat "$WORK/flood.out"); server CPU during the probes $(((c1 - c0) / $(getconf CLK_TCK))) s; RSS $(awk '/VmRSS/ { print $2, $3 }' "/proc/$tpid/status")"
curl -s "$url/metrics" | grep -E '^tenure_http_(slow_readers_closed_total|reply_buffered_bytes) ' | sed 's/^/== /'
echo "== probes, status:ms (000: no answer within 30 s): ${raw[*]}"
printf '%s\n' "${lat[@]}" | sort -n | awk -v bad="$bad" -v n="$PROBES" -v f="$FLOOD" '
    { a[NR] = $1; if ($1 > 1000) over++ }
    END { printf "flood_clients=%d probes=%d median_ms=%d max_ms=%d over_1s=%d unanswered=%d\n",
          f, n, a[int((NR + 1) / 2)], a[NR], over + 0, bad }'
