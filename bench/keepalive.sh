#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How many leases one libtenure client keeps alive (tn-keep-many): LEASES
# per-lease leases of TTL_MS, acquired one after the other and each kept by
# the client's keepalive thread, held for HOLD_MS, once per value of
# CONNS (the keepalive_connections option: renews at once), against a
# fresh tenured each time; then the same leases as one session (claimed in
# batches, one renew for all).  Prints one line per run: what was lost
# (keepalive callbacks before the end: leases the client could not keep),
# renews per second, the least safe time any lease had at a 100 ms sample
# (how close it came to losing one), the client's CPU time over the hold
# and the server's over the whole run (acquires included).  The goal: 5,000 leases at TTL 3000 ms, nothing
# lost.
# Environment: LEASES (5000), TTL_MS (3000), HOLD_MS (30000), CONNS ("1 8
# 16 32"), TENURED (the binary; build/bench's or build/dev's), TN_BIN
# (tn-keep-many's folder; build/dev/bin).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BIN=${TN_BIN:-$root/build/dev/bin}
LEASES=${LEASES:-5000}
TTL_MS=${TTL_MS:-3000}
HOLD_MS=${HOLD_MS:-30000}
CONNS=${CONNS:-1 8 16 32}
WORK=$(mktemp -d /tmp/tenure-bench-keep.XXXXXX)
. "$here/lib.sh" # PIDS, cleanup at exit, free_port, wait_ready, ticks
bench_tenured "$root"
[ -x "$BIN/tn-keep-many" ] || { echo "keepalive: no $BIN/tn-keep-many (make build)" >&2; exit 2; }

# run CONNS [session]: one measurement against a fresh tenured.
run() {
    local url pid t0 out rc=0
    rm -rf "$WORK/data"
    tn_server_start -d "$WORK/data" -l "$WORK/tenured.log" -- --max-leases 100000 ||
        { echo "keepalive: $TN_SERVER_ERR" >&2; exit 1; }
    url=${TN_SRV_URL[main]} pid=${TN_SRV_PID[main]}
    t0=$(ticks "$pid")
    out=$("$BIN/tn-keep-many" "$url" "$LEASES" "$TTL_MS" "$HOLD_MS" "$1" ${2:-}) || rc=$?
    echo "$out server_cpu_ms=$((($(ticks "$pid") - t0) * 1000 / $(getconf CLK_TCK))) exit=$rc"
    tn_server_stop main TERM
}

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); tenured $TENURED"
for c in $CONNS; do run "$c"; done
run 8 session
