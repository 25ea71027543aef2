#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tenured against durable Redis (appendonly yes, appendfsync always), in
# interleaved rounds on 127.0.0.1: the figures docs/PERFORMANCE.md states
# at its top.  Per round, at 50 and at 200 connections, each on a fresh
# server and data dir:
#   - tenured acquire only: wrk with bench/acquire-release.lua acquire
#     (a new name each time, ttl 10 s), every answer must be 201;
#   - Redis acquire only: bench/redis-cycle.c set (SET key:N v NX PX
#     60000, a new key each time), every reply +OK;
#   - tenured acquire -> release cycles: acquire-release.lua cycle;
#   - Redis lock cycles: bench/redis-cycle.c lua (SET NX PX of a secret,
#     then the check-and-delete script by EVALSHA), every reply as due;
# with the server's CPU (user + system, all threads, /proc/PID/stat) per
# request, and the load generator's CPU per request for context (both load
# generators are one thread: wrk -t1 and redis-cycle).  Then the medians
# of the rounds and the ratios tenured / Redis, as a Markdown table.
#
# TENURED_B=path: also measure this second tenured binary in the same
# rounds (say the build before a change) and print it against the first.
# TENURED_ARGS, TENURED_B_ARGS: extra tenured options of each (split on
# spaces), e.g. one binary twice: TENURED=X TENURED_B=X
# TENURED_ARGS=--commit=inline TENURED_B_ARGS=--commit=thread.
# Environment: BENCH_TABLE (only print the table of this raw results file,
# as kept by BENCH_RESULTS), RUNS (rounds, default 5), DURATION (seconds per figure,
# default 5), CONNS (default "50 200"), WRK_THREADS (default 1), TENURED (a
# tenured binary to use; default: build the release flavour into
# BENCH_BUILD, default build/bench), BENCH_OUT (also write the table
# there).  Default: 5 rounds x 2 connection counts x 4 figures x 5 s, about
# 8 minutes with start-up.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BENCH_BUILD:-$ROOT/build/bench}
RUNS=${RUNS:-5}
DUR=${DURATION:-5}
CONNS_LIST=${CONNS:-50 200}
WRK_T=${WRK_THREADS:-1}
LUA=$ROOT/bench/acquire-release.lua

for tool in wrk redis-server redis-cli curl ss awk cc; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is not installed (bench/deps.sh)" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/tenure-bench-fe.XXXXXX)
. "$(dirname "$0")/lib.sh" # PIDS, cleanup at exit
log() { echo "$*" >&2; }
RES=$WORK/results # KEY VALUE ROUND lines
record() { echo "$1 $2 $run" >>"$RES"; }
if [ -n "${BENCH_TABLE:-}" ]; then RES=$BENCH_TABLE; else : >"$RES"; fi

TCK=$(getconf CLK_TCK)
# us_per TICKS COUNT: microseconds per unit.
us_per() { awk -v d="$1" -v n="$2" -v t="$TCK" 'BEGIN { if (n > 0) printf "%.2f", d * 1e6 / t / n }'; }

if [ -n "${BENCH_TABLE:-}" ]; then
    : # nothing to build or run
elif [ -n "${TENURED:-}" ]; then
    log "== using $TENURED as is (TENURED set, nothing built)"
else
    log "== building the release flavour in $BUILD"
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-O2 -g" >/dev/null
    cmake --build "$BUILD" -j2 --target tenured >/dev/null
    TENURED=$BUILD/bin/tenured
fi
REDISCYCLE=$WORK/redis-cycle
[ -n "${BENCH_TABLE:-}" ] || cc -O2 -o "$REDISCYCLE" "$ROOT/bench/redis-cycle.c"
COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$ROOT" diff --quiet HEAD -- src 2>/dev/null || COMMIT="$COMMIT+changes"

# tenured_one RUN MODE CONNS [B]: a fresh server and data dir, one wrk
# run (of TENURED_B, keys "tenuredB.*", when the fourth argument is B).
tenured_one() {
    local run=$1 mode=$2 conns=$3 port data tpid out c0 c1 reqs rps key bin=$TENURED
    local args=${TENURED_ARGS:-}
    key="tenured.$mode.c$conns"
    if [ "${4:-}" = B ]; then
        key="tenuredB.$mode.c$conns"
        bin=$TENURED_B
        args=${TENURED_B_ARGS:-}
    fi
    data="$WORK/t.$key.$run"
    # Every acquire takes a new name with a 10 s TTL: at 100 k/s one 5 s
    # figure holds more live leases than the default caps (500,000), and
    # the grants past them would be 503s.  Redis has no such cap.
    # shellcheck disable=SC2086 # the extra options are split on purpose
    TN_SERVER_BIN=$bin tn_server_start -i t -d "$data" -l "$data.log" -- \
        --max-connections 1024 --max-leases 10000000 --max-names 10000000 \
        $args || { echo "frontend: $TN_SERVER_ERR" >&2; exit 1; }
    port=${TN_SRV_PORT[t]} tpid=${TN_SRV_PID[t]}
    out="$WORK/wrk.$key.$run"
    c0=$(ticks "$tpid")
    /usr/bin/time -f '%U %S' -o "$out.time" \
        timeout $((DUR + 60)) wrk -c "$conns" -t "$WRK_T" -d "${DUR}s" --timeout 5s \
        -s "$LUA" "http://127.0.0.1:$port" -- "$mode" "r$run" >"$out" 2>&1 || true
    c1=$(ticks "$tpid")
    kill -TERM "$tpid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$tpid" 2>/dev/null || break; sleep 0.05; done
    kill -9 "$tpid" 2>/dev/null || true
    wait "$tpid" 2>/dev/null || true
    rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$out")
    reqs=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$out")
    if grep -qE 'Non-2xx|Socket errors' "$out" || ! grep -q 'held=0 other=0' "$out" || [ -z "$rps" ]; then
        log "   WARNING $key run $run: errors or unexpected answers, not counted:"
        sed 's/^/     /' "$out" >&2
        return 0
    fi
    # A cycle is two requests (acquire, then release).
    if [ "$mode" = cycle ]; then
        record "$key.ops" "$(awk -v r="$rps" 'BEGIN { printf "%.0f", r / 2 }')"
        record "$key.cpu" "$(us_per $((c1 - c0)) $((reqs / 2)))"
        record "$key.client" "$(awk -v n="$reqs" -v t="$TCK" '{ printf "%.2f", ($1 + $2) * 1e6 / (n / 2) }' "$out.time")"
    else
        record "$key.ops" "$(printf '%.0f' "$rps")"
        record "$key.cpu" "$(us_per $((c1 - c0)) "$reqs")"
        record "$key.client" "$(awk -v n="$reqs" '{ printf "%.2f", ($1 + $2) * 1e6 / n }' "$out.time")"
    fi
    log "   $key: $rps req/s, $(grep lua: "$out"), server CPU $(awk -v k="$key.cpu" '$1 == k { v = $2 } END { print v }' "$RES") µs/op"
}

# redis_one RUN MODE(set|lua) CONNS: a fresh durable Redis, one redis-cycle run.
redis_one() {
    local run=$1 mode=$2 conns=$3 port dir rpid out c0 c1 rate cmds cycles key per
    key="redis.$mode.c$conns"
    port=$(free_port)
    dir="$WORK/r.$key.$run"
    mkdir -p "$dir"
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes \
        --appendfsync always --save "" --daemonize no --maxclients 2000 >"$dir/log" 2>&1 &
    rpid=$!
    PIDS+=("$rpid")
    for _ in $(seq 1 400); do
        redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break
        sleep 0.025
    done
    c0=$(ticks "$rpid")
    out=$( /usr/bin/time -f '%U %S' -o "$dir/time" \
        timeout $((DUR + 60)) "$REDISCYCLE" 127.0.0.1 "$port" "$conns" "$DUR" "$mode" 2>&1) || true
    c1=$(ticks "$rpid")
    [ "$(redis-cli -p "$port" config get appendfsync | tail -1)" = always ] ||
        log "   WARNING: redis appendfsync is not always"
    kill -9 "$rpid" 2>/dev/null || true
    wait "$rpid" 2>/dev/null || true
    rate=$(sed -n 's/^cycles [0-9]* per_s \([0-9.]*\) errors 0$/\1/p' <<<"$out")
    cmds=$(sed -n 's/^commands \([0-9]*\)$/\1/p' <<<"$out")
    [ -n "$rate" ] && [ -n "$cmds" ] || { log "   WARNING $key run $run: $out"; return 0; }
    # CPU over the whole run (warm-up second included) per unit of work
    # done over the whole run: a cycle is two commands in lua mode.
    per=1
    [ "$mode" = lua ] && per=2
    cycles=$((cmds / per))
    record "$key.ops" "$rate"
    record "$key.cpu" "$(us_per $((c1 - c0)) "$cycles")"
    record "$key.client" "$(awk -v n="$cycles" '{ printf "%.2f", ($1 + $2) * 1e6 / n }' "$dir/time")"
    log "   $key: $(head -1 <<<"$out"), server CPU $(us_per $((c1 - c0)) "$cycles") µs/op"
}

MACHINE="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
log "== machine: $MACHINE, load $(cut -d' ' -f1-3 /proc/loadavg)"
START=$(date +%s)
LOAD0=$(cut -d' ' -f1 /proc/loadavg)
for run in $(seq 1 "$RUNS"); do
    [ -z "${BENCH_TABLE:-}" ] || break
    log "== round $run/$RUNS (${DUR}s per figure)"
    for conns in $CONNS_LIST; do
        # Alternate which server goes first, so that neither always runs
        # right after the other's fsyncs.
        if [ $((run % 2)) = 1 ]; then
            tenured_one "$run" acquire "$conns"
            [ -z "${TENURED_B:-}" ] || tenured_one "$run" acquire "$conns" B
            redis_one "$run" set "$conns"
            tenured_one "$run" cycle "$conns"
            [ -z "${TENURED_B:-}" ] || tenured_one "$run" cycle "$conns" B
            redis_one "$run" lua "$conns"
        else
            redis_one "$run" set "$conns"
            [ -z "${TENURED_B:-}" ] || tenured_one "$run" acquire "$conns" B
            tenured_one "$run" acquire "$conns"
            redis_one "$run" lua "$conns"
            [ -z "${TENURED_B:-}" ] || tenured_one "$run" cycle "$conns" B
            tenured_one "$run" cycle "$conns"
        fi
    done
done
END=$(date +%s)

median() { # KEY
    awk -v k="$1" '$1 == k { print $2 }' "$RES" | sort -g |
        awk '{ a[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print a[(NR + 1) / 2]; else printf "%.2f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
count() { awk -v k="$1" '$1 == k' "$RES" | wc -l; }
# round_ratios A B: the median over rounds of A / B within the same round
# (the machine's load drifts between rounds; within one it is shared).
round_ratios() {
    awk -v a="$1" -v b="$2" '$1 == a { x[$3] = $2 } $1 == b { y[$3] = $2 }
        END { for (r in x) if ((r in y) && y[r] > 0) printf "%.4f\n", x[r] / y[r] }' "$RES" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) print "–"; else if (NR % 2) printf "%.2f×\n", v[(NR + 1) / 2];
              else printf "%.2f×\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b > 0) printf "%.2f×", a / b; else print "–" }'; }
fmt0() { [ -n "$1" ] && printf '%.0f' "$1" || echo "–"; }

table() {
    local conns what t r
    [ -z "${BENCH_TABLE:-}" ] || { START=0; END=0; LOAD0="?"; }
    echo "tenured $COMMIT against redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') (appendonly yes, appendfsync always); medians of $RUNS interleaved rounds, ${DUR} s per figure, one-thread load generators (wrk -t$WRK_T, bench/redis-cycle.c) on the same machine; $MACHINE; load average $LOAD0 at the start, $(cut -d' ' -f1 /proc/loadavg) at the end; $(date -u +%Y-%m-%d), $((END - START)) s."
    echo
    echo "| workload | conns | tenured /s | Redis /s | tenured / Redis (per round) | server CPU µs/op tenured | server CPU µs/op Redis | CPU tenured / Redis (per round) | client CPU µs/op tenured, Redis | rounds |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for what in acquire cycle; do
        for conns in $CONNS_LIST; do
            if [ "$what" = acquire ]; then
                t="tenured.acquire.c$conns" r="redis.set.c$conns"
                label="acquire (Redis: SET NX PX)"
            else
                t="tenured.cycle.c$conns" r="redis.lua.c$conns"
                label="acquire → release cycle (Redis: SET NX PX + Lua check-and-delete)"
            fi
            printf '| %s | %s | %s | %s | %s (%s) | %s | %s | %s (%s) | %s, %s | %s+%s |\n' "$label" "$conns" \
                "$(fmt0 "$(median "$t.ops")")" "$(fmt0 "$(median "$r.ops")")" \
                "$(ratio "$(median "$t.ops")" "$(median "$r.ops")")" "$(round_ratios "$t.ops" "$r.ops")" \
                "$(median "$t.cpu")" "$(median "$r.cpu")" \
                "$(ratio "$(median "$t.cpu")" "$(median "$r.cpu")")" "$(round_ratios "$t.cpu" "$r.cpu")" \
                "$(median "$t.client")" "$(median "$r.client")" \
                "$(count "$t.ops")" "$(count "$r.ops")"
        done
    done
    [ "$(count tenuredB.acquire.c${CONNS_LIST%% *}.ops)" -gt 0 ] || return 0
    echo
    echo "Against a second tenured build measured in the same rounds (TENURED_B=${TENURED_B:-?}):"
    echo
    echo "| workload | conns | tenured /s | tenured B /s | tenured / B (per round) | B / Redis (per round) | server CPU µs/op tenured, B | CPU tenured / B (per round) | rounds |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for what in acquire cycle; do
        for conns in $CONNS_LIST; do
            t="tenured.$what.c$conns" b="tenuredB.$what.c$conns" r="redis.set.c$conns"
            [ "$what" = cycle ] && r="redis.lua.c$conns"
            printf '| %s | %s | %s | %s | %s (%s) | %s (%s) | %s, %s | %s (%s) | %s |\n' "$what" "$conns" \
                "$(fmt0 "$(median "$t.ops")")" "$(fmt0 "$(median "$b.ops")")" \
                "$(ratio "$(median "$t.ops")" "$(median "$b.ops")")" "$(round_ratios "$t.ops" "$b.ops")" \
                "$(ratio "$(median "$b.ops")" "$(median "$r.ops")")" "$(round_ratios "$b.ops" "$r.ops")" \
                "$(median "$t.cpu")" "$(median "$b.cpu")" \
                "$(ratio "$(median "$t.cpu")" "$(median "$b.cpu")")" "$(round_ratios "$t.cpu" "$b.cpu")" \
                "$(count "$b.ops")"
        done
    done
}
echo
table | tee "${BENCH_OUT:-/dev/null}"
if [ -n "${BENCH_RESULTS:-}" ]; then cp "$RES" "$BENCH_RESULTS"; fi
