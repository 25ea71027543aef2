# SPDX-License-Identifier: MIT
# Sourced by the bench scripts: the one way they keep their work folder and
# the processes they start.  Append each started PID to PIDS; at exit every
# one is killed and WORK is removed.
#   WORK=$(mktemp -d /tmp/tenure-bench-NAME.XXXXXX); . "$here/lib.sh"
PIDS=()
bench_cleanup() {
    local p
    for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap bench_cleanup EXIT
