#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One client keeping many leases: how many it loses, and what tenured's CPU
# pays for keeping them (docs/SESSIONS.md, "What sessions cost").
#
#   bench/keepalive-py-go.sh [CLIENT] [MODE] [N] [SECONDS] [TTL_MS]
#     CLIENT   python (bench/py_keepalive.py) or go (go/internal/keepbench)
#     MODE     leases: N leases of their own, each renewed every TTL/3
#              session: N leases claimed under one session, one renew
#     N        leases (default 5000); SECONDS of counting (default 20);
#              TTL_MS (default 3000)
#
# tenured runs on its embedded store in a fresh data dir (BIN: the build's
# bin dir, default build/release/bin, else build/dev/bin).  Prints the
# client's JSON line (lost, alive, tenured_cpu_pct, client_cpu_pct) and
# the machine's load average before and after.  TN_PYTHONPATH runs another
# copy of the Python client (an older one, to compare).  Exits 1 when a
# lease was lost or is no longer the same grant at the end.  The C
# client's twin is bench/keepalive.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here=$root/bench
client=${1:-python}
mode=${2:-leases}
n=${3:-5000}
secs=${4:-20}
ttl=${5:-3000}
BIN=${BIN:-$root/build/release/bin}
[ -x "$BIN/tenured" ] || BIN=$root/build/dev/bin
WORK=$(mktemp -d /tmp/tenure-bench-keepalive.XXXXXX)
. "$here/lib.sh"
ulimit -n "$(ulimit -Hn)"
TN_SERVER_BIN=$BIN/tenured tn_server_start -d "$WORK/data" -l "$WORK/tenured.log" ||
    { echo "keepalive: $TN_SERVER_ERR" >&2; exit 1; }
port=${TN_SRV_PORT[main]} url=${TN_SRV_URL[main]} pid=${TN_SRV_PID[main]}
echo "keepalive: $client $mode n=$n ttl_ms=$ttl seconds=$secs tenured=$BIN/tenured" \
    "load: $(cut -d' ' -f1-3 /proc/loadavg)"
case $client in
python)
    py=${TN_PYTHON:-/usr/bin/python3}
    rc=0
    PYTHONPATH=${TN_PYTHONPATH:-$root/python} "$py" "$here/py_keepalive.py" "$url" "$mode" \
        "$n" "$ttl" "$secs" "$pid" || rc=$?
    ;;
go)
    . "$root/go/env.sh"
    TN_GO_DIR=$root/build/go tn_go_env "$root"
    (cd "$root/go" && "$TN_GO" build -o "$WORK/keepbench" ./internal/keepbench)
    rc=0
    "$WORK/keepbench" "$url" "$mode" "$n" "$ttl" "$secs" "$pid" || rc=$?
    ;;
*)
    echo "usage: bench/keepalive-py-go.sh [python|go] [leases|session] [N] [SECONDS] [TTL_MS]" >&2
    exit 2
    ;;
esac
echo "keepalive: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$rc"
