#!/usr/bin/env bash
# The nemesis of the fault-injection harness (docs/safety/fault-injection.md).
# Source after lib.sh and lib-server.sh.  A run:
#   chaos_init PROFILE            seed (TN_CHAOS_SEED or random), files
#   chaos_server [tenured args]   start tenured (TN_WRAP / env honoured)
#   chaos_clients N SECONDS [tn-chaos client args]   start client processes
#   ... inject faults with chaos_note and the helpers below ...
#   chaos_finish                  SIGCONT everything, wait for the clients
#   chaos_check [expect]          merge the history, run tenure-check;
#                                 expect = clean (default) or violation
# TN_CHAOS_CLIENT_ARGS adds tn-chaos client options (they win over the
# profile's), TN_CHAOS_SECONDS lengthens a run, TN_CHAOS_JUMP=forward makes
# the clock profile jump forward only.
# Every fault is written to $T/schedule (offset in ms from the start, what)
# and as a nemesis line into the history, together with the seed, so a run
# can be replayed with TN_CHAOS_SEED=<seed>.  Keep $T with TN_KEEP=1.

CHAOS=${CHAOS:-$TN_BIN/tn-chaos}
CHAOS_OUT=${CHAOS_OUT:-} # where to copy history and schedule on failure
CHAOS_CLIENT_PIDS=()
CHAOS_SERVER_ARGS=() # tenured arguments chaos_kill9 restarts with
CHAOS_FAULTS=0

chaos_init() {
    CHAOS_PROFILE=$1
    [ -x "$CHAOS" ] || fail "missing $CHAOS (build tn-chaos first)"
    [ -x "$TN_BIN/tenure-check" ] || fail "missing $TN_BIN/tenure-check"
    CHAOS_SEED=${TN_CHAOS_SEED:-$(((RANDOM << 15) | RANDOM))}
    RANDOM=$CHAOS_SEED # the nemesis draws its schedule from the seed
    mkdir -p "$T/h"
    CHAOS_T0=$("$CHAOS" now)
    echo "profile $CHAOS_PROFILE seed $CHAOS_SEED" >"$T/schedule"
    "$CHAOS" note --out "$T/h/nemesis.jsonl" "start profile=$CHAOS_PROFILE seed=$CHAOS_SEED"
}

# chaos_note TEXT: record a fault (or a step of one) now.
chaos_note() {
    local now
    now=$("$CHAOS" now)
    echo "+$(((now - CHAOS_T0) / 1000000)) ms: $*" >>"$T/schedule"
    "$CHAOS" note --out "$T/h/nemesis.jsonl" "$*"
}

# chaos_rand LO HI: a number in [LO, HI] from the seeded generator.
chaos_rand() { echo $(($1 + RANDOM % ($2 - $1 + 1))); }

chaos_server() { tn_start_server "$@"; }

# chaos_clients N SECONDS [args]: N client processes, each 3 threads by
# default, on names chaos:0..2, writing to the sink $T/sink.db.
chaos_clients() {
    local n=$1 secs=$2 i
    shift 2
    for i in $(seq 1 "$n"); do
        "$CHAOS" client --url "$URL" --out "$T/h/c$i.jsonl" --sink "$T/sink.db" \
            --proc "c$i" --duration-ms $((secs * 1000)) \
            --seed $((CHAOS_SEED * 31 + i)) "$@" ${TN_CHAOS_CLIENT_ARGS:-} \
            2>>"$T/clients.log" &
        CHAOS_CLIENT_PIDS+=($!)
        TN_PIDS+=($!)
    done
}

# chaos_running: some client is still running.
chaos_running() {
    local p
    for p in "${CHAOS_CLIENT_PIDS[@]}"; do
        kill -0 "$p" 2>/dev/null && return 0
    done
    return 1
}

chaos_finish() {
    local p
    kill -CONT "$SERVER_PID" 2>/dev/null || true
    for p in "${CHAOS_CLIENT_PIDS[@]}"; do
        kill -CONT "$p" 2>/dev/null || true
    done
    for p in "${CHAOS_CLIENT_PIDS[@]}"; do
        wait "$p" || fail "client $p exited with $?: $(tail -8 "$T/clients.log")"
    done
    chaos_note "end"
}

# chaos_rejects: how many sink writes the fence has refused so far.
chaos_rejects() {
    { "$CHAOS" sink-dump "$T/sink.db" 2>/dev/null || true; } | grep -c '"decision":"reject"' || true
}

# A bounded wait while the clients run: sleep MS milliseconds.
chaos_sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }

# --- faults ---------------------------------------------------------------

chaos_kill9() {
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    chaos_note "kill -9 tenured"
    kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    chaos_sleep_ms "${1:-0}"
    tn_start_server "${CHAOS_SERVER_ARGS[@]}"
    chaos_note "tenured restarted"
}

# chaos_stop_server MS: SIGSTOP tenured for MS milliseconds.
chaos_stop_server() {
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    chaos_note "SIGSTOP tenured for $1 ms"
    kill -STOP "$SERVER_PID"
    chaos_sleep_ms "$1"
    kill -CONT "$SERVER_PID"
    chaos_note "SIGCONT tenured"
}

# chaos_stop_client MS [latest]: SIGSTOP one client process (all its
# threads): a random one, or with "latest" the one that wrote to the sink
# last (it holds a lease and sleeps before its next write, so it wakes up
# as a zombie).
chaos_stop_client() {
    local i=$(($(chaos_rand 1 ${#CHAOS_CLIENT_PIDS[@]}) - 1)) w
    if [ "${2:-}" = latest ]; then
        w=$("$CHAOS" last-writer "$T/sink.db" 2>/dev/null || true)
        w=${w%%.*}
        [[ $w =~ ^c[0-9]+$ ]] && i=$((${w#c} - 1))
    fi
    local p=${CHAOS_CLIENT_PIDS[$i]}
    # A client that has already finished its run is not stopped (no fault).
    kill -STOP "$p" 2>/dev/null || return 0
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    chaos_note "SIGSTOP client c$((i + 1)) for $1 ms"
    chaos_sleep_ms "$1"
    kill -CONT "$p"
    chaos_note "SIGCONT client c$((i + 1))"
}

# chaos_pg_restart DATADIR: crash (SIGKILL of the postmaster) or stop
# (immediate) the private PostgreSQL cluster for 0.3-1.5 s and start it
# again; tenured must be ready again within 20 s, by itself.
chaos_pg_restart() {
    local db=$1 down
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    down=$(chaos_rand 300 1500)
    if [ $((RANDOM % 2)) = 0 ]; then
        chaos_note "PostgreSQL crash (SIGKILL of the postmaster) for $down ms"
        pg_cluster kill "$db" >>"$T/pg.log" 2>&1 || fail "cannot kill PostgreSQL"
    else
        chaos_note "PostgreSQL immediate stop for $down ms"
        pg_cluster stop "$db" >>"$T/pg.log" 2>&1 || fail "cannot stop PostgreSQL"
    fi
    chaos_sleep_ms "$down"
    pg_cluster start "$db" >>"$T/pg.log" 2>&1 || fail "cannot restart PostgreSQL: $(tail -5 "$T/pg.log")"
    chaos_note "PostgreSQL started"
    tn_wait_ready "$URL" 20 || fail "tenured did not come back after PostgreSQL restarted"
}

# chaos_session_support: skip (77) when the store under tenured has no
# sessions (501 not_implemented).
chaos_session_support() {
    local code
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/v1/sessions" \
        -d '{"owner_id":"chaos-probe","ttl_ms":1000}')
    if [ "$code" = 501 ]; then
        echo "skip: this store has no sessions yet"
        exit 77
    fi
    [ "$code" = 201 ] || fail "opening a session: HTTP $code"
}

# chaos_session_counts: after chaos_check, CHAOS_SESSIONS (sessions opened),
# CHAOS_CLAIMS (names granted by batch claims: the procs "<worker>/<name>"
# of chaos_session.c) and CHAOS_LOST (session renews answered lost: a
# holder that learned its session had ended) of the history.
chaos_session_counts() {
    CHAOS_SESSIONS=$(grep -c '"op":"session_open","phase":"ok"' "$T/history.jsonl" || true)
    CHAOS_CLAIMS=$(grep -c '"proc":"[^"/]*/[^"]*","op":"acquire","phase":"ok"' "$T/history.jsonl" || true)
    CHAOS_LOST=$(grep -c '"op":"session_renew","phase":"fail","error":"lost"' "$T/history.jsonl" || true)
}

# Wall-clock jumps through libfaketime: tenured runs with
# LD_PRELOAD=libfaketime, FAKETIME_DONT_FAKE_MONOTONIC=1 and a timestamp
# file that chaos_jump rewrites with an offset of +-2^k ms, k in 2..18
# (4 ms to 262 s).
CHAOS_FAKETIME_LIB=${CHAOS_FAKETIME_LIB:-/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1}
chaos_faketime_env() {
    [ -f "$CHAOS_FAKETIME_LIB" ] || fail "libfaketime missing: $CHAOS_FAKETIME_LIB (apt-get install faketime)"
    echo "+0" >"$T/faketime"
    # shellcheck disable=SC2034 # read by tn_start_server (lib.sh)
    TN_WRAP="env LD_PRELOAD=$CHAOS_FAKETIME_LIB FAKETIME_DONT_FAKE_MONOTONIC=1 FAKETIME_NO_CACHE=1 FAKETIME_TIMESTAMP_FILE=$T/faketime ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
}
CHAOS_OFFSET_MS=0
# chaos_jump [forward|back|any]: move tenured's wall clock by +-2^k ms.
chaos_jump() {
    local dir=${1:-any} k ms sign
    k=$(chaos_rand 2 18)
    ms=$((1 << k))
    case $dir in
    forward) sign=1 ;;
    back) sign=-1 ;;
    *) sign=$(((RANDOM % 2) * 2 - 1)) ;;
    esac
    CHAOS_OFFSET_MS=$((CHAOS_OFFSET_MS + sign * ms))
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    local abs=${CHAOS_OFFSET_MS#-} s=+
    [ "$CHAOS_OFFSET_MS" -lt 0 ] && s=-
    printf '%s%d.%03d\n' "$s" $((abs / 1000)) $((abs % 1000)) >"$T/faketime.new"
    mv "$T/faketime.new" "$T/faketime"
    chaos_note "wall clock jump $((sign * ms)) ms (offset now $CHAOS_OFFSET_MS ms)"
}

# --- checking -------------------------------------------------------------

# chaos_field PATH: a field of the checker's report.
chaos_field() { "$TN_BIN/tn-json-get" "$1" <"$T/report.json"; }

# chaos_check [min ok acquires]: TN_CHAOS_EXPECT=violation (the negative
# controls) turns the check around: the run passes, and the script ends
# here, only if tenure-check reports a violation; it prints the classes.
chaos_check() {
    local expect=${TN_CHAOS_EXPECT:-clean} min_ok=${1:-10} rc=0
    if [ -f "$T/sink.db" ]; then
        "$CHAOS" sink-dump "$T/sink.db" >"$T/h/sink.jsonl" || fail "cannot read the sink"
    fi
    cat "$T"/h/*.jsonl >"$T/history.jsonl"
    "$TN_BIN/tenure-check" "$T/history.jsonl" >"$T/report.json" 2>"$T/check.err" || rc=$?
    CHAOS_EVENTS=$(chaos_field events)
    CHAOS_OPS=$(($(chaos_field operations.acquire) + $(chaos_field operations.renew) + $(chaos_field operations.release) +
        $(chaos_field operations.session_open) + $(chaos_field operations.session_renew) + $(chaos_field operations.session_end)))
    CHAOS_OK=$(chaos_field operations.ok)
    CHAOS_INFO=$(chaos_field operations.info)
    CHAOS_ADMIT=$(chaos_field sink_decisions.admit)
    CHAOS_REJECT=$(chaos_field sink_decisions.reject)
    local acq_ok
    acq_ok=$(grep -c '"op":"acquire","phase":"ok"' "$T/history.jsonl" || true)
    CHAOS_SUMMARY="profile=$CHAOS_PROFILE seed=$CHAOS_SEED faults=$CHAOS_FAULTS events=$CHAOS_EVENTS ops=$CHAOS_OPS ok=$CHAOS_OK info=$CHAOS_INFO grants=$acq_ok sink_admit=$CHAOS_ADMIT sink_reject=$CHAOS_REJECT"
    if [ -n "$CHAOS_OUT" ]; then
        mkdir -p "$CHAOS_OUT"
        cp "$T/history.jsonl" "$CHAOS_OUT/history.jsonl"
        cp "$T/schedule" "$CHAOS_OUT/schedule"
        cp "$T/report.json" "$CHAOS_OUT/report.json"
    fi
    case $expect in
    clean)
        [ "$rc" = 0 ] || {
            echo "schedule:" >&2
            cat "$T/schedule" >&2
            fail "tenure-check exit $rc ($CHAOS_SUMMARY): $(head -c 3000 "$T/report.json") $(cat "$T/check.err")"
        }
        [ "$acq_ok" -ge "$min_ok" ] || fail "only $acq_ok grants: the run proved little ($CHAOS_SUMMARY)"
        [ "$CHAOS_FAULTS" -ge 1 ] || fail "no fault was injected ($CHAOS_SUMMARY)"
        ;;
    violation)
        [ "$rc" = 1 ] || fail "expected tenure-check to report a violation (exit 1), got $rc ($CHAOS_SUMMARY) $(cat "$T/check.err")"
        CHAOS_CAUGHT=$(grep -o '"class": *"[a-z_]*"' "$T/report.json" | sed 's/.*"\([a-z_]*\)"$/\1/' | sort -u | tr '\n' ' ')
        pass "violation reported as expected: classes: ${CHAOS_CAUGHT}($CHAOS_SUMMARY)"
        exit 0
        ;;
    *) fail "TN_CHAOS_EXPECT must be clean or violation" ;;
    esac
}
