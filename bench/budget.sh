#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The budget per durable request of tenured (embedded store, acquire of a
# new name) and of durable Redis (appendfsync always, SET key:N v NX PX on
# a new key) in the same run: the figures of docs/PERFORMANCE.md "Budget
# per request".  For each server and each connection count (CONNS,
# default "1 50"), each on a fresh server and data dir:
#   1. clean window: after 1 s of warm-up, DURATION s of load with
#      `perf stat -e raw_syscalls:sys_enter,syscalls:sys_enter_fdatasync`
#      on the server: system calls and fdatasyncs per request, and the
#      server's user and system CPU per request (/proc/PID/stat, all
#      threads);
#   2. the same with `perf trace -s` instead: which system calls (it
#      slows each one, so its batches are smaller: counts only);
#   3. under callgrind: user-space instructions per request (all threads,
#      DURATION s after 1 s of warm-up; under valgrind the server is ~50x
#      slower, so at 50 connections its batches are larger than natively).
# Then bench/floor.c: one read + one write on a warm loopback socket and
# one write + fdatasync on this file system.  Load generators: wrk -t1
# with bench/acquire-release.lua acquire, and bench/redis-cycle.c set.
#   bench/budget.sh [TENURED]   (default build/bench/bin/tenured, then build/dev's)
# Environment: CONNS, DURATION (default 5).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TENURED=${1:-${TENURED:-}}
DUR=${DURATION:-5}
CONNS_LIST=${CONNS:-1 50}
LUA=$ROOT/bench/acquire-release.lua
for tool in wrk redis-server redis-cli perf valgrind callgrind_control curl ss cc; do
    command -v "$tool" >/dev/null || { echo "budget: $tool is not installed (bench/deps.sh)" >&2; exit 1; }
done
WORK=$(mktemp -d /tmp/tenure-budget.XXXXXX)
. "$ROOT/bench/lib.sh"
bench_tenured "$ROOT"
cc -O2 -o "$WORK/redis-cycle" "$ROOT/bench/redis-cycle.c"
cc -O2 -pthread -o "$WORK/floor" "$ROOT/bench/floor.c"
TCK=$(getconf CLK_TCK)
utime() { awk '{ sub(/^.*\) /, ""); print $12 }' "/proc/$1/stat"; }
stime() { awk '{ sub(/^.*\) /, ""); print $13 }' "/proc/$1/stat"; }

# start SERVER CONNS [callgrind]: a fresh server; sets SPID and SPORT.
start() {
    local dir pre=()
    SPORT=$(free_port)
    dir=$(mktemp -d "$WORK/s.XXXXXX")
    [ "${3:-}" = callgrind ] && pre=(valgrind --tool=callgrind --callgrind-out-file="$dir/cg.%p")
    if [ "$1" = tenured ]; then
        "${pre[@]}" "$TENURED" --listen "127.0.0.1:$SPORT" --data-dir "$dir/db" \
            --max-connections 1024 --max-leases 10000000 --max-names 10000000 \
            >"$dir/log" 2>&1 &
    else
        "${pre[@]}" redis-server --port "$SPORT" --bind 127.0.0.1 --dir "$dir" \
            --appendonly yes --appendfsync always --save "" --daemonize no \
            --maxclients 2000 >"$dir/log" 2>&1 &
    fi
    SPID=$!
    SDIR=$dir
    PIDS+=("$SPID")
    for _ in $(seq 1 1200); do
        if [ "$1" = tenured ]; then
            [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SPORT/readyz")" = 200 ] && break
        else
            redis-cli -p "$SPORT" ping 2>/dev/null | grep -q PONG && break
        fi
        sleep 0.05
    done
}
stop() { kill -9 "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; }

# load SERVER CONNS: DURATION s of load after 1 s of warm-up, between
# the hooks pre_window and post_window; prints the requests of the window.
load() {
    local out=$WORK/load.$RANDOM
    if [ "$1" = tenured ]; then
        wrk -c "$2" -t1 -d1s --timeout 10s -s "$LUA" "http://127.0.0.1:$SPORT" -- acquire "w$RANDOM" >/dev/null 2>&1 || true
        pre_window
        wrk -c "$2" -t1 -d"${DUR}s" --timeout 10s -s "$LUA" "http://127.0.0.1:$SPORT" -- acquire "r$RANDOM" >"$out" 2>&1 || true
        post_window
        if ! grep -q 'held=0 other=0' "$out" || grep -qE 'Non-2xx|Socket errors' "$out"; then
            echo "budget: tenured answered otherwise:" >&2
            cat "$out" >&2
        fi
        sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$out"
    else
        # redis-cycle warms up for 1 s itself; its count covers it too,
        # so the window does as well.
        pre_window
        "$WORK/redis-cycle" 127.0.0.1 "$SPORT" "$2" "$DUR" set >"$out" 2>&1 || true
        post_window
        grep -q 'errors 0$' "$out" || { echo "budget: redis answered otherwise:" >&2; cat "$out" >&2; }
        sed -n 's/^commands \([0-9]*\)$/\1/p' "$out"
    fi
}

per() { awk -v a="$1" -v n="$2" -v s="${3:-1}" 'BEGIN { if (n > 0) printf "%.2f", a * s / n; else print "-" }'; }

clean_window() { # SERVER CONNS
    local reqs u0 s0
    pre_window() {
        u0=$(utime "$SPID") s0=$(stime "$SPID")
        perf stat -x, -e raw_syscalls:sys_enter,syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync \
            -p "$SPID" -o "$WORK/stat" &
        PERF=$!
        sleep 0.2
    }
    post_window() {
        U=$(($(utime "$SPID") - u0)) S=$(($(stime "$SPID") - s0))
        kill -INT "$PERF"
        wait "$PERF" || true
    }
    start "$1" "$2"
    load "$1" "$2" >"$WORK/reqs"
    reqs=$(cat "$WORK/reqs")
    stop
    local sc fd fs
    sc=$(awk -F, '$3 == "raw_syscalls:sys_enter" { print $1 }' "$WORK/stat")
    fd=$(awk -F, '$3 == "syscalls:sys_enter_fdatasync" { print $1 }' "$WORK/stat")
    fs=$(awk -F, '$3 == "syscalls:sys_enter_fsync" { print $1 }' "$WORK/stat")
    echo "| $1 | $2 | $reqs | $(per "$sc" "$reqs") | $(per $((fd + fs)) "$reqs") |" \
        "$(per "$U" "$reqs" $((1000000 / TCK))) | $(per "$S" "$reqs" $((1000000 / TCK))) |" \
        "$(awk -v u="$U" -v s="$S" 'BEGIN { if (u + s > 0) printf "%.0f %%", 100 * s / (u + s) }') |"
}

trace_window() { # SERVER CONNS
    local reqs
    pre_window() {
        perf trace -s -p "$SPID" -o "$WORK/trace" >/dev/null 2>&1 &
        PERF=$!
        sleep 1.5
    }
    post_window() { kill -INT "$PERF"; wait "$PERF" || true; }
    start "$1" "$2"
    reqs=$(load "$1" "$2")
    stop
    # Sum each system call over the threads, per request.
    awk -v n="$reqs" -v who="$1 c$2" '
        $2 ~ /^[0-9]+$/ && $1 ~ /^[a-z_0-9]+$/ && NF >= 8 { c[$1] += $2 }
        END { for (k in c) if (c[k] / n >= 0.01) printf "%s %s %.2f\n", who, k, c[k] / n }' \
        "$WORK/trace" | sort -k4 -gr
}

callgrind_window() { # SERVER CONNS
    local reqs ir=0 f
    pre_window() { callgrind_control -z "$SPID" >/dev/null 2>&1; }
    post_window() { callgrind_control -d "$SPID" >/dev/null 2>&1; }
    start "$1" "$2" callgrind
    reqs=$(load "$1" "$2")
    for f in "$SDIR"/cg."$SPID".1*; do
        [ -e "$f" ] && ir=$((ir + $(awk '/^summary:/ { print $2 }' "$f")))
    done
    stop
    echo "| $1 | $2 | $reqs | $((ir / reqs)) |"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tenured: $TENURED; $(redis-server --version | cut -d' ' -f1-3)"
echo
echo "| server | conns | requests | syscalls per request | fsyncs per request | user CPU µs per request | system CPU µs per request | kernel share |"
echo "|---|---|---|---|---|---|---|---|"
for conns in $CONNS_LIST; do
    clean_window tenured "$conns"
    clean_window redis "$conns"
done
echo
echo "System calls per request by name (perf trace -s, >= 0.01 per request):"
for conns in $CONNS_LIST; do
    trace_window tenured "$conns"
    trace_window redis "$conns"
done
echo
echo "| server | conns | requests | user-space instructions per request (callgrind) |"
echo "|---|---|---|---|"
for conns in $CONNS_LIST; do
    callgrind_window tenured "$conns"
    callgrind_window redis "$conns"
done
echo
mkdir -p "$WORK/floor-dir"
"$WORK/floor" "$WORK/floor-dir"
