# SPDX-License-Identifier: MIT
# Sourced by the bench scripts: the one way they keep their work folder and
# the processes they start.  Append each started PID to PIDS; at exit every
# one is killed, with every tenured of the launcher, and WORK is removed.
# tenured is started by the launcher the tests use,
# tests/integration/lib-tenured.sh (tn_server_start: a free port, data and
# log in WORK, ready once its own log says it listens and /readyz answers;
# tn_server_stop, tn_server_restart ...); TN_SERVER_BIN names the binary
# (bench_tenured sets it).  free_port prints a free TCP port; wait_ready
# waits for another server's /readyz; ticks reads a process's CPU time;
# bench_tenured picks the binary of the probe scripts.
#   WORK=$(mktemp -d /tmp/tenure-bench-NAME.XXXXXX); . "$here/lib.sh"
PIDS=()
TN_SERVER_WORK=$WORK
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/integration/lib-tenured.sh"
bench_cleanup() {
    local p
    for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done
    tn_server_kill_all
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap bench_cleanup EXIT

# free_port: the launcher's (below the kernel's ephemeral range, not in
# use in any TCP state).
free_port() { tn_free_port; }

# bench_tenured ROOT: set TENURED to the binary a probe script measures
# (TENURED if set, else build/bench's, else build/dev's) and raise the
# open-files limit for its many clients.
bench_tenured() {
    if [ -z "${TENURED:-}" ]; then
        TENURED=$1/build/bench/bin/tenured
        [ -x "$TENURED" ] || TENURED=$1/build/dev/bin/tenured
    fi
    [ -x "$TENURED" ] || { echo "bench: no tenured binary (set TENURED)" >&2; exit 1; }
    TN_SERVER_BIN=$TENURED
    ulimit -n "$(ulimit -Hn)"
}

# wait_ready URL: poll URL/readyz every 25 ms until it answers 200 (10 s at
# most; the caller's first request then tells if it never did).
wait_ready() {
    for _ in $(seq 1 400); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$1/readyz")" = 200 ] && return 0
        sleep 0.025
    done
    return 0
}

# ticks PID: user + system clock ticks of the whole process, all threads.
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
