#!/usr/bin/env bash
# What recording expiries costs (docs/safety/revealed-end.md): the same
# loads against two tenured builds, alternated A B A B ... in one run.
#   bench/expiry-cost.sh OLD_TENURED NEW_TENURED [ROUNDS] [SECONDS]
# Loads, each on a fresh data dir:
#   acquire  wrk, bench/acquire-release.lua acquire: unique names, ttl 10 s
#            (nothing expires): acquires/s
#   expiry   tn-hammer load, 16 connections on 2000 names with ttl
#            50-150 ms, so nearly every grant expires and most acquires
#            take over an expired name: grants/s, and the server's
#            expiries and commit rows
# Prints one line per run and the medians.  Needs wrk and a built tree.
set -euo pipefail
old=$1 new=$2 rounds=${3:-3} secs=${4:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
bin=${TN_BIN:-$src/build/dev/bin}
t=$(mktemp -d /tmp/tn-expiry-cost.XXXXXX)
TN_SERVER_WORK=$t
. "$src/tests/integration/lib-tenured.sh" # the tests' launcher
trap 'tn_server_kill_all; rm -rf "$t"' EXIT
port=$(tn_free_port)
url=http://127.0.0.1:$port
metric() { curl -s "$url/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
# start TENURED: that binary on $port with a fresh data dir.
start() {
    rm -rf "$t/d"
    TN_SERVER_BIN=$1 tn_server_start -p "$port" -d "$t/d" -l "$t/log" -- --log-level error ||
        { echo "server did not start: $TN_SERVER_ERR" >&2; exit 1; }
}
stop() { tn_server_stop main TERM; }
declare -A acq exp
for r in $(seq 1 "$rounds"); do
    for which in old new; do
        b=$old
        [ "$which" = new ] && b=$new
        start "$b"
        a=$(wrk -c32 -t2 -d"${secs}s" -s "$src/bench/acquire-release.lua" "$url" -- acquire "$which$r" 2>&1 |
            awk '/Requests\/sec/ {print int($2)}')
        stop
        start "$b"
        rm -f "$t/g" # tn-hammer appends
        "$bin/tn-hammer" load --url "$url" --out "$t/g" --conns 16 --names 2000 \
            --prefix "x$r:" --ttl-min 50 --ttl-max 150 --duration-ms $((secs * 1000)) \
            --seed "$r" 2>/dev/null || true
        g=$(grep -c '^grant ' "$t/g" || true)
        sleep 0.3 # the last expiries
        e=$(metric tenure_expiries_total)
        rows=$(metric tenure_commit_rows_total)
        stop
        echo "round $r $which: acquire ${a}/s; expiry load $((g / secs)) grants/s, expiries $e, commit rows $rows"
        acq[$which]+="$a "
        exp[$which]+="$((g / secs)) "
    done
done
med() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for which in old new; do
    echo "median $which: acquire $(med <<<"${acq[$which]}")/s, expiry load $(med <<<"${exp[$which]}") grants/s"
done
