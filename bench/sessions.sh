#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What sessions cost over HTTP (docs/PERFORMANCE.md "Sessions over HTTP"),
# against tenured on both stores and etcd, each figure on a fresh server
# and data dir; prints one table with the load average beside each figure.
#
#   bench/sessions.sh [SECTION...]    (default: all of them, in this order)
#     keep     N leases kept alive for KEEP_SECS: per-lease renews, one
#              session, one etcd lease with N keys, N etcd leases; server
#              CPU per second and requests per second, for N in NS
#     claims   a claim of 1,000 names against 1,000 acquires one after
#              another and 1,000 at once: wall time and server CPU
#     attach   an acquire under a session of 10 leases against one of
#              100,000; a put attached to an etcd lease of 10 keys
#              against one of 100,000 (etcd issue 15993)
#     expiry   an unrelated client's acquires while a session of 100,000
#              leases expires, and while one is deleted
#     restart  1,000,000 leases in 1,000 sessions: RSS, then kill -9 and
#              restart RESTARTS times: time and CPU to ready, and whether
#              every session and lease came back live
#     pg       claims, attach and expiry on the PostgreSQL store (under
#              scripts/with-pg.sh)
#
# Environment: NS ("1000 10000 100000"), TTL_MS (3000), KEEP_SECS (10),
# KEEP_CONNS (32: the clients' keepalive_connections), KEEP_ROUNDS (3
# interleaved rounds of every N and kind), KEEP_FILL (20: seconds at most
# to grant the N leases; the window starts then with those granted),
# ROUNDS (5),
# EXPIRY_ROUNDS (2), RESTARTS (2), RESTART_SESSIONS (1000), RESTART_PER
# (1000 leases each), SESSIONS_BIG (100000), EXPIRY_HOWS ("expire
# delete"), PG_SECTIONS ("claims attach expiry": those run on PostgreSQL), BENCH_BUILD
# (build/bench), TENURED (use this tenured; bench_sessions_http from
# BENCH_BUILD), SESSIONS_OUT (also write the table here), SESSIONS_RESULTS
# (keep the raw lines here; default BENCH_BUILD/sessions-results.txt),
# SESSIONS_TABLE (only print the table of this raw file).
# CPU is read from /proc for the server process alone (every thread's
# schedstat), so a figure is what the server spent whatever else runs on
# the machine; wall times and latencies are not, hence the load average.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BENCH_BUILD:-$ROOT/build/bench}
NS=${NS:-1000 10000 100000}
TTL_MS=${TTL_MS:-3000}
KEEP_SECS=${KEEP_SECS:-10}
KEEP_CONNS=${KEEP_CONNS:-32}
KEEP_ROUNDS=${KEEP_ROUNDS:-3}
KEEP_FILL=${KEEP_FILL:-20}
ROUNDS=${ROUNDS:-5}
EXPIRY_ROUNDS=${EXPIRY_ROUNDS:-2}
RESTARTS=${RESTARTS:-2}
BIG=${SESSIONS_BIG:-100000}
SECTIONS=${*:-keep claims attach expiry restart pg}
RES=${SESSIONS_TABLE:-${SESSIONS_RESULTS:-$BUILD/sessions-results.txt}}
WORK=$(mktemp -d /tmp/tenure-bench-sessions.XXXXXX)
. "$ROOT/bench/lib.sh"     # PIDS, cleanup, free_port, ticks
. "$ROOT/bench/servers.sh" # start_etcd
log() { echo "$*" >&2; }
load() { cut -d' ' -f1 /proc/loadavg; }

build() {
    [ -n "${SESSIONS_INNER:-}" ] && return 0
    log "== building tenured and bench_sessions_http (release, -O2) in $BUILD"
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-O2 -g" >/dev/null
    cmake --build "$BUILD" -j2 --target tenured bench_sessions_http >/dev/null
}
BIN=$BUILD/bin
LOAD=$BIN/bench_sessions_http

# run LABEL ARGS...: one bench_sessions_http run; its lines, prefixed by
# LABEL and the load average at its start, go to the results file.
run() {
    local label=$1 l out
    shift
    l=$(load)
    log "   [$label, load $l] bench_sessions_http $*"
    out=$("$LOAD" "$@") || { log "   WARNING: $label failed: $out"; return 0; }
    sed "s/^/$label load=$l /" <<<"$out" | tee -a "$RES" | sed 's/^/     /' >&2
}

# start_tenured ARGS...: a fresh tenured on its own data dir; sets TURL, TPID.
start_tenured() {
    local port data
    port=$(free_port)
    data=$(mktemp -d "$WORK/t.XXXXXX")
    "$TENURED" --listen "127.0.0.1:$port" --data-dir "$data" --max-connections 1024 \
        --max-leases 4000000 --max-names 4000000 "$@" >>"$data.log" 2>&1 &
    TPID=$!
    PIDS+=("$TPID")
    TURL=http://127.0.0.1:$port
    wait_ready "$TURL"
    TDATA=$data
}
stop_tenured() {
    kill "$TPID" 2>/dev/null || true
    wait "$TPID" 2>/dev/null || true
}
start_etcd_fresh() { # sets EURL, EPID
    local cport pport
    cport=$(free_port)
    pport=$(free_port)
    start_etcd "$(mktemp -d "$WORK/e.XXXXXX")" "$cport" "$pport" \
        --quota-backend-bytes 8589934592
    EPID=$SRV_PID
    EURL=http://127.0.0.1:$cport
}
stop_pid() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# keep_one N KIND ROUND: one figure of the keep section, on a fresh server.
keep_one() {
    local n=$1 kind=$2 r=$3
    case $kind in
    leases | session)
        start_tenured --expected-leases "$n"
        run "keep-$n-$kind round=$r" keep "$TURL" "$TPID" "$kind" "$n" "$TTL_MS" \
            "$KEEP_SECS" "$KEEP_CONNS" "$KEEP_FILL"
        stop_tenured
        ;;
    *)
        start_etcd_fresh
        run "keep-$n-$kind round=$r" keep "$EURL" "$EPID" "$kind" "$n" "$TTL_MS" \
            "$KEEP_SECS" "$KEEP_CONNS" "$KEEP_FILL"
        stop_pid "$EPID"
        ;;
    esac
}
# Rounds outermost, so each kind's figures of one N are taken minutes
# apart under the same changing load; the table gives their medians and
# the median of each round's ratio against the session.
section_keep() {
    local n kind r kinds="leases session"
    command -v etcd >/dev/null && kinds="$kinds etcd-one etcd-many"
    log "== keep: N leases alive for ${KEEP_SECS}s, TTL ${TTL_MS} ms, $KEEP_ROUNDS rounds"
    for r in $(seq 1 "$KEEP_ROUNDS"); do
        for n in $NS; do
            for kind in $kinds; do keep_one "$n" "$kind" "$r"; done
        done
    done
}

# The two sections that also run on PostgreSQL: STORE is embedded or pg.
claims_on() {
    start_tenured_on "$1"
    run "claims-$1" claims "$TURL" "$TPID${PGPID:+:$PGPID}" 1000 "$ROUNDS" 50
    stop_tenured
}
attach_on() {
    start_tenured_on "$1" --expected-leases $((BIG + 100000))
    run "attach-$1" attach "$TURL" "$TPID${PGPID:+:$PGPID}" tenured "$BIG" 10 500 4
    stop_tenured
}
expiry_on() {
    local how
    for how in ${EXPIRY_HOWS:-expire delete}; do
        start_tenured_on "$1" --expected-leases $((EXPIRY_ROUNDS * BIG + 100000))
        run "expiry-$1" expiry "$TURL" "$TPID${PGPID:+:$PGPID}" "$BIG" 5000 "$how" 3 2 "$EXPIRY_ROUNDS"
        stop_tenured
    done
}
start_tenured_on() { # STORE [ARGS...]
    local store=$1
    shift
    if [ "$store" = pg ]; then
        "$TENURE_TEST_PG_BINDIR/psql" -X -q "$TENURE_TEST_PG_URL" \
            -c "DROP DATABASE IF EXISTS tn_bench_s" -c "CREATE DATABASE tn_bench_s" >/dev/null
        local base=${TENURE_TEST_PG_URL%%\?*}
        start_tenured --store "${base%/*}/tn_bench_s" "$@"
    else
        start_tenured "$@"
    fi
}

section_claims() {
    log "== claims: a claim of 1,000 names against 1,000 acquires"
    claims_on embedded
}
section_attach() {
    log "== attach: under a session of 10 leases, and of $BIG"
    attach_on embedded
    if command -v etcd >/dev/null; then
        start_etcd_fresh
        run attach-etcd attach "$EURL" "$EPID" etcd "$BIG" 10 100 4
        stop_pid "$EPID"
    fi
}
section_expiry() {
    log "== expiry: an unrelated client while a session of $BIG leases ends"
    expiry_on embedded
}

rss_kib() { awk "/^$2:/ { print \$2 }" "/proc/$1/status"; }
section_restart() {
    local s=${RESTART_SESSIONS:-1000} per=${RESTART_PER:-1000} r t0 t1 ms cpu rss0 rss1
    log "== restart: $((s * per)) leases in $s sessions"
    start_tenured --expected-leases $((s * per)) --max-sessions 200000
    rss0=$(rss_kib "$TPID" VmRSS)
    run restart-fill fill "$TURL" "$TPID" "$s" "$per" 600000 "$WORK/sessions.txt" 8
    sleep 1
    rss1=$(rss_kib "$TPID" VmRSS)
    echo "restart-mem load=$(load) rss_before_kib=$rss0 rss_kib=$rss1 hwm_kib=$(rss_kib "$TPID" VmHWM) leases=$((s * per)) per_lease_b=$(((rss1 - rss0) * 1024 / (s * per)))" |
        tee -a "$RES" >&2
    local port=${TURL##*:}
    for r in $(seq 1 "$RESTARTS"); do
        kill -9 "$TPID"
        wait "$TPID" 2>/dev/null || true
        t0=$(date +%s%N)
        "$TENURED" --listen "127.0.0.1:$port" --data-dir "$TDATA" --max-connections 1024 \
            --max-leases 4000000 --max-names 4000000 --max-sessions 200000 \
            --expected-leases $((s * per)) >>"$TDATA.log" 2>&1 &
        TPID=$!
        PIDS+=("$TPID")
        for _ in $(seq 1 12000); do
            [ "$(curl -s -o /dev/null -w '%{http_code}' "$TURL/readyz")" = 200 ] && break
            sleep 0.01
        done
        t1=$(date +%s%N)
        cpu=$(ticks "$TPID")
        ms=$(((t1 - t0) / 1000000))
        echo "restart-ready load=$(load) run=$r ready_ms=$ms cpu_ms=$((cpu * 1000 / $(getconf CLK_TCK))) rss_kib=$(rss_kib "$TPID" VmRSS)" |
            tee -a "$RES" >&2
        run "restart-verify" verify "$TURL" "$TPID" "$WORK/sessions.txt" "$per"
    done
    stop_tenured
}

section_pg() {
    if [ -z "${TENURE_TEST_PG_URL:-}" ]; then
        log "== pg: under scripts/with-pg.sh"
        SESSIONS_INNER=1 SESSIONS_RESULTS=$RES TENURED=$TENURED \
            "$ROOT/scripts/with-pg.sh" "$0" pg || log "   WARNING: pg failed"
        return 0
    fi
    local port=${TENURE_TEST_PG_URL##*:}
    port=${port%%/*}
    PGPID=$(ss -Hltnp "sport = :$port" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
    log "== pg: PostgreSQL on port $port, postmaster $PGPID"
    local s
    for s in ${PG_SECTIONS:-claims attach expiry}; do "${s}_on" pg; done
    PGPID=
}

# ------------------------------------------------------------------- table
table() {
    echo "bench/sessions.sh, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); TTL ${TTL_MS} ms; load = 1-minute load average at the start of each figure"
    echo
    awk -f "$ROOT/bench/sessions-table.awk" "$RES"
}

if [ -z "${SESSIONS_TABLE:-}" ]; then
    [ -n "${SESSIONS_INNER:-}" ] || : >"$RES"
    if [ -z "${TENURED:-}" ]; then
        build
        TENURED=$BIN/tenured
    fi
    [ -x "$LOAD" ] || { build; }
    ulimit -n "$(ulimit -Hn)"
    log "== $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); tenured $TENURED"
    for s in $SECTIONS; do
        "section_$s" || log "   WARNING: section $s failed"
    done
    [ -n "${SESSIONS_INNER:-}" ] && exit 0
fi
table | tee "${SESSIONS_OUT:-/dev/null}"
