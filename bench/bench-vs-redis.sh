#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tenured vs durable Redis, in one run on 127.0.0.1:
#  - builds the release flavour into build/bench (-O2),
#  - tenured on a fresh data dir: wrk -c50 -t2 -d10s with
#    bench/acquire-release.lua, acquire->release cycles and acquire only,
#  - redis-server --appendonly yes --appendfsync always --save "":
#    redis-benchmark -c 50 -n 200000 -r 1000000 SET key:__rand_int__ val NX PX 10000,
# RUNS times (default 3), then prints each run, the medians and the ratios,
# and the CPU each server and each client spent per request (acquire only
# and redis; the server's from /proc, all its threads, the client's from
# /usr/bin/time).
# bench/frontend.sh is the interleaved successor of this comparison (acquire
# only and lock cycles at 50 and 200 connections, 5 rounds).
# Environment: RUNS, DURATION (wrk -d, default 10s), CONNS (default 50),
# REDIS_N (default 200000), BENCH_BUILD (default build/bench), TENURED (a
# tenured binary to use instead of building one).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BENCH_BUILD:-$ROOT/build/bench}
RUNS=${RUNS:-3}
DURATION=${DURATION:-10s}
CONNS=${CONNS:-50}
REDIS_N=${REDIS_N:-200000}
LUA=$ROOT/bench/acquire-release.lua

for tool in wrk redis-server redis-benchmark redis-cli curl ss /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is not installed" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/tenure-bench.XXXXXX)
. "$(dirname "$0")/lib.sh" # PIDS, cleanup at exit


if [ -n "${TENURED:-}" ]; then
    echo "== using $TENURED as is (TENURED set, nothing built)"
else
    echo "== building the release flavour in $BUILD"
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-O2 >/dev/null
    cmake --build "$BUILD" -j2 --target tenured >/dev/null
    TENURED=$BUILD/bin/tenured
fi

# CPU seconds (user + system, all threads) process $1 has used so far.
cpu_of() { awk -v t="$(getconf CLK_TCK)" '{printf "%.2f\n", ($14 + $15) / t}' "/proc/$1/stat"; }
# us_per REQUESTS SECONDS...: the seconds summed, in microseconds per request.
us_per() {
    local n=$1
    shift
    printf '%s\n' "$@" | awk -v n="$n" '{s += $1} END {printf "%.1f\n", s * 1e6 / n}'
}

# start_tenured TAG: a fresh data dir, a free port (lib.sh's launcher);
# sets TPORT, TPID.
start_tenured() {
    TN_SERVER_BIN=$TENURED tn_server_start -i t -d "$WORK/data.$1" -l "$WORK/tenured.$1.log" ||
        { echo "bench: $TN_SERVER_ERR" >&2; exit 1; }
    TPORT=${TN_SRV_PORT[t]} TPID=${TN_SRV_PID[t]}
}

stop_tenured() { tn_server_stop t TERM; }

# run_wrk MODE TAG: sets RPS (requests/s), CPU_S and CPU_C (server and
# client CPU, microseconds per request); fails on errors or non-2xx answers.
run_wrk() {
    local out="$WORK/wrk.$2.out" rps s0 s1 n
    s0=$(cpu_of "$TPID")
    timeout 120 /usr/bin/time -f '%U %S' -o "$WORK/time.$2" \
        wrk -c "$CONNS" -t 2 -d "$DURATION" --timeout 5s -s "$LUA" \
        "http://127.0.0.1:$TPORT" -- "$1" "$2" >"$out" 2>&1
    s1=$(cpu_of "$TPID")
    n=$(awk '/requests in/ {print $1}' "$out")
    CPU_S=$(us_per "${n:-1}" "$(awk -v a="$s0" -v b="$s1" 'BEGIN {print b - a}')")
    # shellcheck disable=SC2046 # user and system seconds, two words
    CPU_C=$(us_per "${n:-1}" $(tail -1 "$WORK/time.$2"))
    sed 's/^/    /' "$out" >&2
    if grep -q 'Non-2xx' "$out" || grep -q 'Socket errors' "$out"; then
        echo "bench: wrk saw errors or non-2xx answers ($2)" >&2
        exit 1
    fi
    rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$out")
    [ -n "$rps" ] || { echo "bench: no Requests/sec from wrk" >&2; exit 1; }
    RPS=$(printf '%.0f' "$rps")
}

# run_redis TAG: sets RPS, CPU_S and CPU_C as run_wrk does.
run_redis() {
    local port dir out rps
    port=$(free_port)
    dir="$WORK/redis.$1"
    mkdir -p "$dir"
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes \
        --appendfsync always --save "" --daemonize no >"$dir/log" 2>&1 &
    local rpid=$!
    PIDS+=("$rpid")
    for _ in $(seq 1 200); do
        redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break
        sleep 0.05
    done
    local s0 s1
    s0=$(cpu_of "$rpid")
    out=$(timeout 120 /usr/bin/time -f '%U %S' -o "$dir/time" \
        redis-benchmark -h 127.0.0.1 -p "$port" -c "$CONNS" -n "$REDIS_N" \
        -r 1000000 -q SET key:__rand_int__ val NX PX 10000 2>&1 | tr '\r' '\n' | grep 'requests per second' | tail -1)
    s1=$(cpu_of "$rpid")
    CPU_S=$(us_per "$REDIS_N" "$(awk -v a="$s0" -v b="$s1" 'BEGIN {print b - a}')")
    # shellcheck disable=SC2046 # user and system seconds, two words
    CPU_C=$(us_per "$REDIS_N" $(tail -1 "$dir/time"))
    echo "    $out" >&2
    redis-cli -p "$port" config get appendfsync | tr '\n' ' ' | sed 's/^/    redis /' >&2
    echo >&2
    kill -9 "$rpid" 2>/dev/null || true
    wait "$rpid" 2>/dev/null || true
    rps=$(sed -n 's/.*: *\([0-9.]*\) requests per second.*/\1/p' <<<"$out")
    [ -n "$rps" ] || { echo "bench: no result from redis-benchmark" >&2; exit 1; }
    RPS=$(printf '%.0f' "$rps")
}

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
cyc=() acq=() red=() acq_s=() acq_c=() red_s=() red_c=()
for run in $(seq 1 "$RUNS"); do
    echo "== run $run/$RUNS: tenured acquire->release (wrk -c$CONNS -t2 -d$DURATION)"
    start_tenured "c$run"
    run_wrk cycle "c$run"
    cyc+=("$RPS")
    stop_tenured
    echo "== run $run/$RUNS: tenured acquire only"
    start_tenured "a$run"
    run_wrk acquire "a$run"
    acq+=("$RPS") acq_s+=("$CPU_S") acq_c+=("$CPU_C")
    stop_tenured
    echo "== run $run/$RUNS: redis SET NX PX, appendfsync always (-c$CONNS -n$REDIS_N)"
    run_redis "$run"
    red+=("$RPS") red_s+=("$CPU_S") red_c+=("$CPU_C")
    echo "   run $run: tenured cycle ${cyc[-1]} req/s, tenured acquire ${acq[-1]} req/s, redis ${red[-1]} req/s"
done

mc=$(median "${cyc[@]}")
ma=$(median "${acq[@]}")
mr=$(median "${red[@]}")
echo
echo "== medians of $RUNS runs ($(nproc) cores, $(uname -r))"
printf '%-46s %10s\n' "tenured acquire->release, requests/s" "$mc"
printf '%-46s %10s\n' "tenured acquire->release, acquires/s" "$((mc / 2))"
printf '%-46s %10s\n' "tenured acquire only, acquires/s" "$ma"
printf '%-46s %10s\n' "redis SET NX PX (appendfsync always), SETs/s" "$mr"
awk -v a="$ma" -v c="$mc" -v r="$mr" 'BEGIN {
    printf "ratio acquire only / redis:                     %.2f\n", a / r
    printf "ratio acquire->release requests / redis:        %.2f\n", c / r
}'
printf '%-46s %10s\n' "CPU per acquire: tenured, all threads, us" "$(median "${acq_s[@]}")"
printf '%-46s %10s\n' "CPU per acquire: wrk, us" "$(median "${acq_c[@]}")"
printf '%-46s %10s\n' "CPU per SET: redis-server, us" "$(median "${red_s[@]}")"
printf '%-46s %10s\n' "CPU per SET: redis-benchmark, us" "$(median "${red_c[@]}")"
echo
echo "== as a table (requests/s; CPU in us per request, server + client)"
echo "| run | tenured acquire only | tenured acquire->release | redis SET NX PX, appendfsync always | acquire only / redis | CPU tenured + wrk | CPU redis + redis-benchmark |"
echo "|---|---|---|---|---|---|---|"
for i in $(seq 0 $((RUNS - 1))); do
    awk -v n=$((i + 1)) -v a="${acq[$i]}" -v c="${cyc[$i]}" -v r="${red[$i]}" \
        -v as="${acq_s[$i]}" -v ac="${acq_c[$i]}" -v rs="${red_s[$i]}" -v rc="${red_c[$i]}" \
        'BEGIN { printf "| %d | %d | %d | %d | %.2f | %s + %s | %s + %s |\n", n, a, c, r, a / r, as, ac, rs, rc }'
done
awk -v a="$ma" -v c="$mc" -v r="$mr" \
    'BEGIN { printf "| median | %d | %d | %d | %.2f | | |\n", a, c, r, a / r }'
