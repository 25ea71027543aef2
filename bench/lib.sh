# SPDX-License-Identifier: MIT
# Sourced by the bench scripts: the one way they keep their work folder and
# the processes they start.  Append each started PID to PIDS; at exit every
# one is killed and WORK is removed.  free_port prints a free TCP port;
# wait_ready waits for a server's /readyz; ticks reads a process's CPU
# time; bench_tenured picks the binary of the probe scripts.
#   WORK=$(mktemp -d /tmp/tenure-bench-NAME.XXXXXX); . "$here/lib.sh"
PIDS=()
bench_cleanup() {
    local p
    for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap bench_cleanup EXIT

free_port() {
    local p
    for _ in $(seq 1 200); do
        # Below the kernel's ephemeral range, and not in use in any state.
        p=$((20000 + RANDOM % 12000))
        ss -tanH "sport = :$p" | grep -q . || { echo "$p"; return 0; }
    done
    return 1
}

# bench_tenured ROOT: set TENURED to the binary a probe script measures
# (TENURED if set, else build/bench's, else build/dev's) and raise the
# open-files limit for its many clients.
bench_tenured() {
    if [ -z "${TENURED:-}" ]; then
        TENURED=$1/build/bench/bin/tenured
        [ -x "$TENURED" ] || TENURED=$1/build/dev/bin/tenured
    fi
    [ -x "$TENURED" ] || { echo "bench: no tenured binary (set TENURED)" >&2; exit 1; }
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
