#!/usr/bin/env bash
# The HA chaos profile's cluster and nemesis (docs/HA.md): t777 runs it on
# synchronous replication, t778 (the negative control) on asynchronous.
# Source after lib.sh, lib-server.sh, lib-pg.sh and lib-chaos.sh.
#   ha_setup sync|async   two PostgreSQL nodes, a primary and a standby
#                         that replicates through a relay (HA_REP_PID); three
#                         tenured on one connection string naming both
#                         nodes (target_session_attrs=read-write), instance 2
#                         through a relay of its own (HA_PART_PID); sets
#                         HA_URLS, the three instances' URLs
#   ha_failover           cut the replication stream (silently), kill -9
#                         the primary, promote the standby, check its
#                         ledger, rebuild the dead node as the new standby
#   ha_kill_instance      kill -9 a tenured instance, restart it
#   ha_partition MS       instance 2 loses the database, silently, for MS
#   ha_ledger_check WHEN  every acknowledged grant is in the primary's ledger
#   ha_windows            per failover: unavailability and refused acquires
#   ha_caught WHAT LOST LEDGER  the verdict of a negative control
# The relays are tests/tools/ha/blackhole_proxy.py: SIGUSR1 silences one
# (nothing relayed, no reset), SIGUSR2 heals it.

HA_PY=${TN_PYTHON3:-/usr/bin/python3}
HA_TOOLS=$TN_SRC/tests/tools/ha
declare -A HA_PORT=()
HA_PRIMARY=a
HA_STANDBY=b
HA_FAILOVERS=0
HA_LOST=0 # acknowledged grants found missing (the negative control)

# ha_relay VAR LISTEN:TARGET...: start a relay, its pid into VAR.
ha_relay() {
    local var=$1 pidf
    shift
    pidf=$T/relay.$RANDOM.pid
    "$HA_PY" "$HA_TOOLS/blackhole_proxy.py" --pidfile "$pidf" "$@" \
        >>"$T/relay.log" 2>&1 &
    TN_PIDS+=($!)
    printf -v "$var" '%s' "$!"
    pg_wait_for 10 test -s "$pidf" || fail "relay $* did not start: $(tail -3 "$T/relay.log")"
}

ha_sql() { pg_cluster sql "${HA_PORT[$1]}" "$2"; }

# ha_standby NODE: (re)build NODE as the standby of the primary, its
# replication through a new relay (HA_REP_PID).
ha_standby() {
    local n=$1 rport
    rport=$(pg_cluster port)
    ha_relay HA_REP_PID "$rport:${HA_PORT[$HA_PRIMARY]}"
    pg_cluster destroy "$PGPRIV/$n" >>"$T/pg.log" 2>&1 || true
    pg_cluster standby "$PGPRIV/$n" "${HA_PORT[$n]}" "$rport" "tn_$n" "$HA_SYNC" \
        >>"$T/pg.log" 2>&1 || fail "cannot build $n as a standby: $(tail -5 "$T/pg.log")"
    if [ -n "$HA_SYNC" ]; then
        pg_cluster wait-sync "${HA_PORT[$HA_PRIMARY]}" "tn_$n" 60 ||
            fail "standby $n is not synchronous"
    fi
}

ha_setup() {
    HA_SYNC=""
    [ "$1" = sync ] && HA_SYNC="tn_a, tn_b"
    HA_PORT[a]=$(pg_cluster port)
    HA_PORT[b]=$(pg_cluster port)
    while [ "${HA_PORT[b]}" = "${HA_PORT[a]}" ]; do HA_PORT[b]=$(pg_cluster port); done
    pg_cluster init "$PGPRIV/a" "${HA_PORT[a]}" "$HA_SYNC" >"$T/pg.log" 2>&1 ||
        fail "cannot start PostgreSQL: $(tail -5 "$T/pg.log")"
    ha_standby b
    local qa qb opts="target_session_attrs=read-write&connect_timeout=2" extra=""
    qa=$(pg_cluster port)
    qb=$(pg_cluster port)
    ha_relay HA_PART_PID "$qa:${HA_PORT[a]}" "$qb:${HA_PORT[b]}"
    [ -n "$HA_SYNC" ] && extra=--require-sync-standby
    local direct="postgresql://postgres@127.0.0.1:${HA_PORT[a]},127.0.0.1:${HA_PORT[b]}/postgres?$opts"
    pg_start_instance 0 "$direct" $extra
    pg_start_instance 1 "$direct" $extra
    pg_start_instance 2 "postgresql://postgres@127.0.0.1:$qa,127.0.0.1:$qb/postgres?$opts" $extra
    HA_URLS="${URLS[0]},${URLS[1]},${URLS[2]}"
}

# ha_ledger_check WHEN: the grants the clients were told of so far (read
# first) are all in the primary's ledger (read after).
ha_ledger_check() {
    local rc=0
    mkdir -p "$T/snap"
    for f in "$T"/h/c*.jsonl; do cp "$f" "$T/snap/"; done
    ha_sql "$HA_PRIMARY" "SELECT name || '|' || token FROM lease_grants" >"$T/ledger" ||
        fail "cannot read the ledger of $HA_PRIMARY"
    "$HA_PY" "$HA_TOOLS/ha_check.py" ledger "$T/ledger" "$T"/snap/c*.jsonl >"$T/ledger.out" || rc=$?
    echo "$1: $(cat "$T/ledger.out")" >>"$T/ledger.log"
    case $rc in
    0) ;;
    1) HA_LOST=$((HA_LOST + 1)) ;;
    *) fail "ha_check.py ledger exited $rc: $(cat "$T/ledger.out")" ;;
    esac
    [ "$rc" = 0 ] || [ "${HA_EXPECT_LOSS:-0}" = 1 ] ||
        fail "$1: acknowledged grants missing from the promoted primary: $(cat "$T/ledger.out")"
}

ha_failover() {
    local p=$HA_PRIMARY s=$HA_STANDBY cut
    cut=${HA_CUT_MS:-$(chaos_rand 300 1200)}
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    HA_FAILOVERS=$((HA_FAILOVERS + 1))
    chaos_note "replication to standby $s cut (silent) for $cut ms"
    kill -USR1 "$HA_REP_PID"
    chaos_sleep_ms "$cut"
    chaos_note "kill -9 primary $p"
    pg_cluster kill "$PGPRIV/$p"
    # The cut never heals: what the standby lacks now, it never gets.
    kill -9 "$HA_REP_PID" 2>/dev/null || true
    pg_cluster promote "$PGPRIV/$s" >>"$T/pg.log" 2>&1 || fail "cannot promote $s"
    chaos_note "standby $s promoted"
    HA_PRIMARY=$s
    HA_STANDBY=$p
    ha_ledger_check "failover $HA_FAILOVERS"
    ha_standby "$p"
    chaos_note "old primary $p rebuilt as the standby of $s"
}

ha_kill_instance() {
    local i
    i=$(chaos_rand 0 2)
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    chaos_note "kill -9 tenured $i"
    pg_kill_instance "$i"
    chaos_sleep_ms "$(chaos_rand 200 1500)"
    pg_restart_instance "$i"
    chaos_note "tenured $i restarted"
}

ha_partition() {
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    chaos_note "tenured 2 cut from PostgreSQL (silent) for $1 ms"
    kill -USR1 "$HA_PART_PID"
    chaos_sleep_ms "$1"
    kill -USR2 "$HA_PART_PID"
    chaos_note "tenured 2 reaches PostgreSQL again"
}

# ha_windows: print the windows of every failover (after chaos_check).
ha_windows() {
    "$HA_PY" "$HA_TOOLS/ha_check.py" windows "$T/history.jsonl" >"$T/windows" ||
        fail "ha_check.py windows failed"
    cat "$T/windows"
    HA_SUMMARY=$(tail -1 "$T/windows")
    [ -n "$CHAOS_OUT" ] && cp "$T/windows" "$T/ledger.log" "$CHAOS_OUT/" 2>/dev/null
    return 0
}

# ha_caught WHAT LOST LEDGER: the verdict of a negative control (after
# chaos_finish) on WHAT, the setup that must not be safe: the run must be
# caught, by LOST > 0 acknowledged grants missing from a ledger (LEDGER, the
# ledger.log line to show) or by tenure-check finding a violation; passes
# naming what caught it.
ha_caught() {
    local what=$1 lost=$2 ledger=$3 checked by=""
    set +e
    (TN_CHAOS_EXPECT=violation chaos_check) >"$T/check.out" 2>&1
    checked=$?
    set -e
    cat "$T/check.out"
    echo "$ledger"
    [ "$lost" -gt 0 ] || [ "$checked" = 0 ] ||
        fail "$what was not caught: the ledger kept every acknowledged grant and tenure-check found nothing ($ledger)"
    [ "$lost" -gt 0 ] && by="the ledger check (${ledger#*: ledger: })"
    [ "$checked" = 0 ] && by="${by:+$by and }tenure-check ($(grep -o 'classes: [a-z_ ]*' "$T/check.out"))"
    pass "$what caught by $by"
}
