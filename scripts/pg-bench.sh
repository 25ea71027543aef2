#!/usr/bin/env bash
# pg-bench.sh BIN_DIR [SECONDS] [CLIENTS] [RUNS]: tenured over PostgreSQL
# against pgbench running the very acquire statement tenured prepares
# (printed by tn-pg-sql), one statement per round trip, same concurrency,
# same database, same run.  Needs TENURE_TEST_PG_URL (run it under
# scripts/with-pg.sh).  Each side gets a fresh schema per run; the two
# alternate RUNS times; prints every run and the median ratio.
set -euo pipefail
bin=${1:?usage: pg-bench.sh BIN_DIR [SECONDS] [CLIENTS] [RUNS]}
secs=${2:-10}
clients=${3:-50}
runs=${4:-1}
: "${TENURE_TEST_PG_URL:?run under scripts/with-pg.sh}"
pgbin=${TENURE_TEST_PG_BINDIR:-/usr/lib/postgresql/15/bin}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/tenure-pgbench.XXXXXX)
TN_SERVER_WORK=$work TN_SERVER_BIN=$bin/tenured
. "$here/../tests/integration/lib-tenured.sh" # the tests' launcher
cleanup() {
    tn_server_kill_all
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

url_schema() { # SCHEMA
    local sep='?'
    case "$TENURE_TEST_PG_URL" in *\?*) sep='&' ;; esac
    printf '%s%soptions=-csearch_path%%3D%s' "$TENURE_TEST_PG_URL" "$sep" "$1"
}
fresh() { # SCHEMA
    "$pgbin/psql" -X -q -v ON_ERROR_STOP=1 "$TENURE_TEST_PG_URL" \
        -c "DROP SCHEMA IF EXISTS $1 CASCADE; CREATE SCHEMA $1" >/dev/null 2>&1
}

run_pgbench() {
    fresh bench_pgbench
    "$bin/tn-pg-sql" schema | "$pgbin/psql" -X -q -v ON_ERROR_STOP=1 \
        "$(url_schema bench_pgbench)" >/dev/null
    {
        echo '\set p1 random(1, 100000)'
        echo '\set p2 random(1, 50)'
        echo '\set p3 1000'
        echo '\set p4 0'
        echo '\set p5 random(1, 1000000000)'
        echo '\set p6 random(1, 1000000000)'
        "$bin/tn-pg-sql" pgbench acquire
    } >"$work/acquire.sql"
    "$pgbin/pgbench" -n -M prepared -f "$work/acquire.sql" -c "$clients" -j 2 \
        -T "$secs" "$(url_schema bench_pgbench)" >"$work/pgbench.out" 2>&1 ||
        { cat "$work/pgbench.out" >&2; exit 1; }
    sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$work/pgbench.out" | head -1
}

run_tenured() {
    fresh bench_tenured
    local port
    tn_server_start -d "$work/data" -l "$work/tenured.log" -- \
        --store "$(url_schema bench_tenured)" --max-connections 1024 ||
        { echo "pg-bench: $TN_SERVER_ERR" >&2; exit 1; }
    port=${TN_SRV_PORT[main]}
    wrk -c "$clients" -t 2 -d "${secs}s" -s "$here/pg-bench.lua" \
        "http://127.0.0.1:$port" >"$work/wrk.out" 2>&1
    curl -s "http://127.0.0.1:$port/metrics" >"$work/metrics.txt"
    tn_server_stop main TERM
    sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$work/wrk.out"
}

ratios=()
for r in $(seq 1 "$runs"); do
    pg_tps=$(run_pgbench)
    tn_rps=$(run_tenured)
    batch=$(awk '/^tenure_pg_batches_total/ {b=$2} /^tenure_pg_statements_total/ {s=$2}
        END {if (b > 0) printf "%.1f", s / b; else print "n/a"}' "$work/metrics.txt")
    ratio=$(python3 -c "print('%.2f' % ($tn_rps / $pg_tps))")
    ratios+=("$ratio")
    echo "run $r: pgbench $pg_tps statements/s ($(sed -n 's/^latency average = //p' "$work/pgbench.out")), tenured $tn_rps requests/s ($(awk '/Latency/ {print $2}' "$work/wrk.out") avg, $batch statements/transaction, $(grep answers "$work/wrk.out")), ratio $ratio"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print "median ratio tenured/pgbench (" NR " runs, -c '"$clients"', '"$secs"' s): " a[int((NR+1)/2)]}'
