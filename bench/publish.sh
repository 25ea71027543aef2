#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What --publish costs and what it buys, in one run (docs/history/perf-log.md,
# "Revocation streams"):
#  1. durable acquires/s (wrk, bench/acquire-release.lua acquire mode, on
#     unique names) with no publisher and with --publish to a local Redis
#     stream, RUNS rounds interleaved, each on a fresh server;
#  2. per publishing run: how far the stream lagged during the load (entry
#     time in Redis minus the event's at_ms: p50, p99, max) and how long
#     the publisher took to drain after the load stopped;
#  3. a holder following the Redis stream (libtenure events_url): from
#     tenured logging a force release to the holder's callback, N times.
# Environment: RUNS (3), DURATION (5 s), CONNS (50), N (20), HOLDER_ONLY=1
# (part 3 only).
# Needs a dev build (build/dev/bin), wrk, redis-server, redis-cli.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BIN=${TN_BIN:-$here/../build/dev/bin}
RUNS=${RUNS:-3} DUR=${DURATION:-5} CONNS=${CONNS:-50} N=${N:-20}
WORK=$(mktemp -d /tmp/tenure-bench-publish.XXXXXX)
. "$(dirname "$0")/lib.sh" # PIDS, cleanup at exit
for tool in wrk redis-server redis-cli curl; do
    command -v "$tool" >/dev/null || { echo "bench/publish: needs $tool" >&2; exit 2; }
done
port() { free_port; }

RPORT=$(port)
redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
    >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 100); do redis-cli -p "$RPORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
rcli() { redis-cli -p "$RPORT" "$@"; }

start_tenured() { # DATA [args...]
    local data=$1
    shift
    TN_SERVER_BIN=$BIN/tenured tn_server_start -i t -d "$data" -l "$WORK/tenured.log" -- "$@" ||
        { echo "publish: $TN_SERVER_ERR" >&2; exit 1; }
    TPORT=${TN_SRV_PORT[t]} TURL=${TN_SRV_URL[t]} TPID=${TN_SRV_PID[t]}
}
stop_tenured() { tn_server_stop t TERM; }
metric() { curl -s "$TURL/metrics" | awk -v m="$1" 'index($1, m "{") == 1 || $1 == m {print $2; exit}'; }

one() { # RUN MODE(off|redis)
    local run=$1 mode=$2 args=() stream="bench:$run"
    [ "$mode" = redis ] && args=(--publish "redis://127.0.0.1:$RPORT/$stream" --publish-maxlen 0)
    start_tenured "$WORK/data.$mode.$run" "${args[@]}"
    wrk -c "$CONNS" -t 2 -d "${DUR}s" --timeout 5s -s "$here/acquire-release.lua" "$TURL" \
        -- acquire "p$mode$run" >"$WORK/wrk.$mode.$run" 2>&1 || true
    local rps
    rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$WORK/wrk.$mode.$run")
    local extra=""
    if [ "$mode" = redis ]; then
        local t0 t1 head
        head=$(metric tenure_publish_log_head)
        t0=$(date +%s%3N)
        while [ "$(metric tenure_publish_lag_events)" != 0 ]; do sleep 0.01; done
        t1=$(date +%s%3N)
        # stream entry time (ms part of the entry id) minus the event's at_ms
        rcli XRANGE "$stream" - + | awk '
            /^[0-9]+-[0-9]+$/ { split($0, a, "-"); ent = a[1]; next }
            $0 == "at_ms" { getline; print ent - $0 }' | sort -n >"$WORK/lag.$run"
        local n p50 p99 max
        n=$(wc -l <"$WORK/lag.$run")
        p50=$(awk -v n="$n" 'NR == int(n * 0.5) + 1 {print; exit}' "$WORK/lag.$run")
        p99=$(awk -v n="$n" 'NR == int(n * 0.99) + 1 {print; exit}' "$WORK/lag.$run")
        max=$(tail -1 "$WORK/lag.$run")
        extra=" events=$head in_stream=$n stream_lag_ms_p50=$p50 p99=$p99 max=$max drain_after_load_ms=$((t1 - t0)) resets=$(metric tenure_publish_resets_total)"
    fi
    stop_tenured
    echo "run $run $mode acquires/s=$rps$extra"
}

echo "# bench/publish.sh: RUNS=$RUNS DURATION=${DUR}s CONNS=$CONNS, $(nproc) cores, $(date -u +%F)"
[ "${HOLDER_ONLY:-0}" = 1 ] && RUNS=0
for run in $(seq 1 "$RUNS"); do
    if [ $((run % 2)) = 1 ]; then one "$run" off; one "$run" redis; else one "$run" redis; one "$run" off; fi
done | tee "$WORK/runs"
for mode in off redis; do
    awk -v m="$mode" '$3 == m { split($4, a, "="); print a[2] }' "$WORK/runs" | sort -n |
        awk -v m="$mode" '{ v[NR] = $1 } END { printf "median acquires/s %-5s %.0f (of %d runs)\n", m, v[int((NR + 1) / 2)], NR }'
done

# 3. force release -> holder callback, through the Redis stream
start_tenured "$WORK/data.holder" --publish "redis://127.0.0.1:$RPORT/holder"
: >"$WORK/hl"
for i in $(seq 1 "$N"); do
    "$BIN/tn-ev-loss" "$TURL" "h:$i" 30000 "redis://127.0.0.1:$RPORT/holder" >"$WORK/h.$i" 2>&1 &
    p=$!
    for _ in $(seq 1 200); do grep -q '^acquired' "$WORK/h.$i" && break; sleep 0.02; done
    sleep 0.3
    curl -s -o /dev/null -X DELETE "$TURL/v1/leases/h:$i?force=true"
    wait "$p" || true
    at_cb=$(sed -n 2p "$WORK/h.$i" | awk '$1 == "lost" {print $4}')
    [ -n "$at_cb" ] || { echo "holder $i: $(cat "$WORK/h.$i")" >&2; continue; }
    at_ev=$(rcli XRANGE holder - + | awk -v n="h:$i" '
        $0 == "type" { getline; t = $0 } $0 == "name" { getline; nm = $0 }
        $0 == "at_ms" { getline; if (t == "revoked" && nm == n) { print; exit } }')
    echo $((at_cb - at_ev)) >>"$WORK/hl"
done
stop_tenured
sort -n "$WORK/hl" | awk '{ v[NR] = $1 } END { printf "force release -> holder callback via Redis: median %d ms, max %d ms (%d runs; goal 100 ms)\n", v[int((NR + 1) / 2)], v[NR], NR }'
