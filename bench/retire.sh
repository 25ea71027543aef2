#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Retired names and restart time (docs/history/perf-log.md, "Retiring names").
#
#   bench/retire.sh names [N]      N unique names (default 2 000 000), 100 ms
#                                  TTL, --retain-ms 1000: peak RSS (bound
#                                  64 MiB) and tenure.db size after
#   bench/retire.sh restart [N]    restart over N live leases (default
#                                  1 000 000): time from exec to /readyz 200
#                                  (bound 2 s), and the CPU it took
#
# BIN is the build's bin dir (default build/release/bin, else build/dev/bin).
# Exits 1 when a bound is missed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/build/release/bin}
[ -x "$BIN/tenured" ] || BIN=$root/build/dev/bin
mode=${1:-names}
T=$(mktemp -d /tmp/tenure-retire.XXXXXX)
PID=
# tenured by the tests' launcher, looking every 5 ms while it starts (the
# restart is timed).
TN_SERVER_WORK=$T TN_SERVER_BIN=$BIN/tenured TN_SERVER_POLL=0.005
. "$root/tests/integration/lib-tenured.sh"
cleanup() {
    tn_server_kill_all
    rm -rf "$T"
}
trap cleanup EXIT
port=$(tn_free_port)
URL=http://127.0.0.1:$port
# start ARGS...: start tenured on $port (no wait); sets PID.  ready: wait.
start() {
    tn_server_start -n -p "$port" -d "$T/data" -l "$T/log" -- \
        --max-names 0 --max-leases 0 "$@"
    PID=${TN_SRV_PID[main]}
}
ready() { tn_server_wait main 20 || { echo "FAIL: $TN_SERVER_ERR" >&2; exit 1; }; }
metric() { curl -s "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

case $mode in
names)
    N=${2:-2000000}
    mkdir -p "$T/data"
    start --retain-ms 1000
    ready
    peak=0
    (
        while kill -0 "$PID" 2>/dev/null; do
            awk '/VmHWM/ {print $2}' "/proc/$PID/status" >"$T/hwm" 2>/dev/null || true
            sleep 1
        done
    ) &
    t0=$(date +%s.%N)
    "$BIN/tn-hammer" load --url "$URL" --out /dev/null --unique 1 --count "$N" \
        --ttl-min 100 --ttl-max 100 --conns 32 --duration-ms 3600000 --prefix "job:"
    t1=$(date +%s.%N)
    sleep 3
    peak=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$PID/status")
    known=$(metric tenure_leases_known)
    retired=$(metric tenure_names_retired_total)
    tn_server_stop main TERM
    PID=
    db=$(stat -c %s "$T/data/tenure.db")
    printf 'names=%s seconds=%.1f rate=%.0f/s peak_rss_kib=%s rss_kib=%s known=%s retired=%s tenure.db=%s\n' \
        "$N" "$(echo "$t1 - $t0" | bc)" "$(echo "$N / ($t1 - $t0)" | bc -l)" \
        "$peak" "$rss" "$known" "$retired" "$db"
    [ "$peak" -lt $((64 * 1024)) ] || { echo "FAIL: peak RSS ${peak} KiB >= 64 MiB"; exit 1; }
    ;;
restart)
    N=${3:-${2:-1000000}}
    mkdir -p "$T/data"
    start
    ready
    tn_server_stop main TERM
    PID=
    # N held leases with an hour to run, as the server writes them.
    sqlite3 "$T/data/tenure.db" "
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $N)
      INSERT INTO leases(id, name, owner_id, request_id, token, secret, ttl_ms,
        held, expires_at_ms, lock_delay_ms, principal)
      SELECT i, 'shard:' || i, 'worker-' || (i % 100), NULL, i, randomblob(16),
        3600000, 1, 9000000000000, 0, NULL FROM n;
      UPDATE meta SET value = $N WHERE key = 'last_token';"
    t0=$(date +%s.%N)
    start
    ready
    t1=$(date +%s.%N)
    # CPU (user + system) the server used up to ready: on a busy machine
    # the wall time is mostly waiting for a core.
    cpu=$(awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$PID/stat")
    live=$(metric tenure_leases_live)
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$PID/status")
    secs=$(echo "$t1 - $t0" | bc)
    printf 'live=%s restart_seconds=%.2f cpu_seconds=%.2f rss_kib=%s load=%s\n' \
        "$live" "$secs" "$cpu" "$rss" "$(cut -d' ' -f1-3 /proc/loadavg)"
    [ "$live" = "$N" ] || { echo "FAIL: $live live leases after the restart, want $N"; exit 1; }
    [ "$(echo "$secs <= 2" | bc)" = 1 ] || { echo "FAIL: restart took ${secs} s > 2 s"; exit 1; }
    ;;
*)
    echo "usage: bench/retire.sh names [N] | restart [N]" >&2
    exit 2
    ;;
esac
