#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# User-space instructions per durable request of tenured on a fixed
# request mix, counted by callgrind: a figure that neither a busy machine
# nor a guest without hardware counters blurs (`perf stat -e
# instructions:u` says "not supported" in this project's VMs).
#   bench/insn.sh [BIN]                    print the figures
#   bench/insn.sh --check REFERENCE [BIN]  also fail (exit 1) when one is
#                                          over its reference by > 10 %
# BIN defaults to build/dev/bin/tenured.  One tenured under callgrind on a
# fresh data dir (embedded store, --commit=inline), then with
# bench/insn_client.py, one request at a time on one connection:
#   warm-up: WARM acquire -> release cycles (not counted);
#   acquire: N acquires of new names, every answer 201;
#   cycle:   N acquires, each followed by its release (204);
# the counters zeroed before and dumped after each figure, all threads
# summed, less the periodic timers' share (they run per second, and the
# run's length depends on the load), divided by the N acquires.  One request per commit batch: the
# whole cost of a commit lands on each request (at 50 connections it is
# shared), so the figures are larger than bench/instructions.sh's, and
# repeat to within a fraction of a percent whatever the load.
# REFERENCE (bench/insn-reference.txt) holds "flavour <text>" and one
# "<figure> <instructions>" line per figure; the check runs only for the
# build flavour written there (compiler, build type, flags; TN_FLAVOUR
# gives the build's, ctest passes it) and skips (exit 77) otherwise, or
# without valgrind (bench/deps.sh).  Environment: N (default 200), WARM
# (default 40), SLACK (percent, default 10).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
REF=
if [ "${1:-}" = --check ]; then
    REF=${2:?usage: bench/insn.sh --check REFERENCE [BIN]}
    shift 2
fi
BIN=${1:-$ROOT/build/dev/bin/tenured}
N=${N:-200}
WARM=${WARM:-40}
SLACK=${SLACK:-10}
skip() { echo "insn: skipped: $*"; exit 77; }
if [ -n "$REF" ] && [ -n "${TN_FLAVOUR:-}" ]; then
    want=$(sed -n 's/^flavour //p' "$REF")
    [ "$want" = "$TN_FLAVOUR" ] ||
        skip "the reference is for the flavour '$want', this build is '$TN_FLAVOUR'"
fi
for tool in valgrind callgrind_control callgrind_annotate curl ss; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (bench/deps.sh)"
done
[ -x "$BIN" ] || { echo "insn: no tenured at $BIN" >&2; exit 1; }
WORK=$(mktemp -d /tmp/tenure-insn.XXXXXX)
. "$ROOT/bench/lib.sh"
# The server's options come from its command line only.
while read -r v; do unset "$v"; done < <(compgen -e | grep '^TENURE_' || true)

port=$(free_port)
valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.%p" \
    "$BIN" --listen "127.0.0.1:$port" --data-dir "$WORK/db" \
    --commit=inline >"$WORK/log" 2>&1 &
pid=$!
PIDS+=("$pid")
for _ in $(seq 1 1200); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz")" = 200 ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$WORK/log" >&2; exit 1; }
    sleep 0.05
done
client() { /usr/bin/python3 "$ROOT/bench/insn_client.py" "$port" "$@"; }
# periodic FILE: the instructions of the callbacks that run per second,
# not per request (the connections' idle tick, the retire timer, the
# listener's sweep): the slower valgrind runs on a loaded machine, the
# more of them a figure holds (up to 2 % of it), so they are left out.
periodic() {
    callgrind_annotate --inclusive=yes --threshold=100 --auto=no "$1" 2>/dev/null |
        awk '/:(tn_http_conn_tick|on_retire_timer) \[/ || /listen\.c:sweep \[/ {
                 gsub(/,/, "", $1); s += $1 } END { print s + 0 }'
}
client w "$WARM" cycle
dump=0
status=0
for figure in acquire cycle; do
    callgrind_control -z "$pid" >/dev/null 2>&1
    client "$figure" "$N" "$figure"
    callgrind_control -d "$pid" >/dev/null 2>&1
    dump=$((dump + 1))
    ir=0 timers=0
    for f in "$WORK"/cg."$pid"."$dump"*; do
        ir=$((ir + $(awk '/^summary:/ { print $2 }' "$f")))
        timers=$((timers + $(periodic "$f")))
    done
    per=$(((ir - timers) / N))
    line="insn: $figure: $per user-space instructions per acquire"
    line="$line ($ir over $N requests, less $timers of periodic timers)"
    if [ -n "$REF" ]; then
        ref=$(awk -v f="$figure" '$1 == f { print $2 }' "$REF")
        [ -n "$ref" ] || { echo "insn: no '$figure' line in $REF" >&2; exit 1; }
        limit=$((ref * (100 + SLACK) / 100))
        line="$line, reference $ref, limit $limit (+$SLACK %)"
        if [ "$per" -gt "$limit" ]; then
            line="$line: OVER"
            status=1
        fi
    fi
    echo "$line"
done
[ "$status" -eq 0 ] || echo "insn: more instructions per acquire than $REF allows;" \
    "find the cause (bench/insn.sh, callgrind_annotate), or if the growth" \
    "is wanted, write the new figures there and say why in the commit"
exit "$status"
