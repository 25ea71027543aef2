#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# User-space instructions per request of tenured, counted by callgrind
# (valgrind): the one figure of server work that a busy or shared machine
# does not blur, and one that works in a guest without hardware counters.
# Per round, for each binary (alternating which goes first): a fresh server
# and data dir under callgrind, a 1 s warm-up with wrk, counters zeroed,
# DURATION seconds of wrk with bench/acquire-release.lua, counters dumped;
# instructions of all the server's threads / requests answered.  Kernel
# work (system calls, TCP, fdatasync) is not counted: see task-clock in
# bench/frontend.sh for that.  Under valgrind the server runs ~50x slower,
# so batches are larger than natively; compare builds only within a run.
#   bench/instructions.sh BIN [BIN_B]
# Environment: RUNS (rounds, default 3), DURATION (seconds, default 4),
# CONNS (default 50), MODES (default "acquire cycle"), ARGS and ARGS_B
# (extra tenured options of BIN and BIN_B, split on spaces: one binary in
# two modes is bench/instructions.sh X X with ARGS=--commit=inline
# ARGS_B=--commit=thread).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
A=${1:?usage: bench/instructions.sh BIN [BIN_B]}
B=${2:-}
RUNS=${RUNS:-3}
DUR=${DURATION:-4}
CONNS=${CONNS:-50}
MODES=${MODES:-acquire cycle}
LUA=$ROOT/bench/acquire-release.lua
for tool in valgrind callgrind_control wrk curl ss; do
    command -v "$tool" >/dev/null || { echo "instructions: $tool is not installed (bench/deps.sh)" >&2; exit 1; }
done
WORK=$(mktemp -d /tmp/tenure-bench-ir.XXXXXX)
. "$(dirname "$0")/lib.sh"


# one BIN MODE RUN ARGS: prints "instructions requests".
one() {
    local bin=$1 mode=$2 run=$3 args=$4 port data pid reqs ir=0 f
    data=$(mktemp -d "$WORK/d.XXXXXX")
    # shellcheck disable=SC2086 # the extra options are split on purpose
    TN_WRAP="valgrind --tool=callgrind --callgrind-out-file=$data/cg.%p" TN_SERVER_BIN=$bin \
        tn_server_start -i ir -d "$data/db" -l "$data/log" -w 60 -- --max-connections 1024 $args ||
        { echo "instructions: $TN_SERVER_ERR" >&2; exit 1; }
    port=${TN_SRV_PORT[ir]} pid=${TN_SRV_PID[ir]}
    wrk -c "$CONNS" -t1 -d1s --timeout 10s -s "$LUA" "http://127.0.0.1:$port" \
        -- "$mode" "w$run$RANDOM" >/dev/null 2>&1 || true
    callgrind_control -z "$pid" >/dev/null
    wrk -c "$CONNS" -t1 -d"${DUR}s" --timeout 10s -s "$LUA" "http://127.0.0.1:$port" \
        -- "$mode" "r$run$RANDOM" >"$data/wrk" 2>&1 || true
    callgrind_control -d "$pid" >/dev/null
    tn_server_stop ir TERM
    reqs=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$data/wrk")
    if ! grep -q 'held=0 other=0' "$data/wrk" || grep -qE 'Non-2xx|Socket errors' "$data/wrk"; then
        echo "instructions: $bin $mode: unexpected answers, not counted" >&2
        sed 's/^/  /' "$data/wrk" >&2
        echo "0 0"
        return 0
    fi
    for f in "$data"/cg."$pid".1*; do
        [ -e "$f" ] && ir=$((ir + $(awk '/^summary:/ { print $2 }' "$f")))
    done
    echo "$ir $reqs"
}

RES=$WORK/res
for run in $(seq 1 "$RUNS"); do
    order="A B"
    [ $((run % 2)) -eq 0 ] && order="B A"
    for mode in $MODES; do
        for which in $order; do
            bin=$A args=${ARGS:-}
            if [ "$which" = B ]; then
                [ -n "$B" ] || continue
                bin=$B args=${ARGS_B:-}
            fi
            read -r ir reqs < <(one "$bin" "$mode" "$run" "$args")
            [ "$reqs" -gt 0 ] || continue
            echo "$which $mode $run $((ir / reqs)) $reqs" | tee -a "$RES" >&2
        done
    done
done
echo "| build | mode | conns | instructions per request (median of rounds) | rounds |"
echo "|---|---|---|---|---|"
for which in A B; do
    bin=$A
    [ "$which" = B ] && bin=$B
    [ -n "$bin" ] || continue
    for mode in $MODES; do
        awk -v w="$which" -v m="$mode" '$1 == w && $2 == m { print $4 }' "$RES" | sort -n |
            awk -v b="$bin" -v m="$mode" -v c="$CONNS" '{ v[NR] = $1 }
                END { if (NR == 0) exit; med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                      printf "| %s | %s | %s | %.0f | %d |\n", b, m, c, med, NR }'
    done
done
