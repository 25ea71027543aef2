#!/usr/bin/env bash
# The Patroni chaos profile's cluster and nemesis (docs/HA.md): three
# PostgreSQL nodes under Patroni 3.0.2 with one etcd, from the recipe in
# contrib/patroni (local-cluster.sh, patroni.yml.in), and three tenured.
# Source after lib.sh and lib-server.sh; it sources lib-pg.sh, lib-chaos.sh
# and lib-ha.sh, which it builds on.
#   pat_prepare             skip (77) without PostgreSQL 15, Patroni or etcd;
#                           $PGPRIV for the nodes
#   pat_setup sync|async    etcd, nodes n1..n3, each reaching etcd through a
#                           relay of its own (PAT_ETCD_RELAY: cutting a node
#                           from etcd) and announcing its PostgreSQL through
#                           another (PAT_REP_RELAY: replicas, pg_rewind and
#                           base backups use it, tenured does not: cutting a
#                           node's replication); three tenured, each naming
#                           the nodes in another order; the probes
#                           (serve_probe.py) and a long-lived holder
#                           (tenure run, TTL 60 s)
#   pat_fault KIND          one fault on the current primary, then wait
#                           until the cluster is whole again (a primary
#                           with a synchronous standby, every node back),
#                           check the ledger, note the timings.  KIND:
#                           postmaster (kill -9 of the postmaster), patroni
#                           (kill -9 of Patroni, restarted 12-20 s later),
#                           freeze (SIGSTOP of Patroni and every postgres
#                           process of the node for 15-25 s), etcd-cut (the
#                           node cut from etcd for 15 s), etcd-kill (etcd
#                           killed, restarted 3-8 s later), double (the
#                           primary and a standby killed, Patroni and
#                           postgres, back 15 s later)
#   pat_finish              stop the probes and the holder
#   pat_report              per fault one "patroni-window" line, then a
#                           summary (after chaos_check)
# TN_PATRONI_* (contrib/patroni/local-cluster.sh) set the Patroni settings.

. "$TN_SRC/tests/integration/lib-pg.sh"
. "$TN_SRC/tests/integration/lib-chaos.sh"
. "$TN_SRC/tests/integration/lib-ha.sh"

PAT_LC=$TN_SRC/contrib/patroni/local-cluster.sh
PAT_PROBE=$TN_SRC/tests/tools/ha/serve_probe.py
declare -A PAT_PG=() PAT_API=() PAT_ETCD_RELAY=() PAT_REP_RELAY=() PAT_EPORT=() PAT_RPORT=()
PAT_FAULTS=0
PAT_FAILOVERS=0
PAT_NODES="n1 n2 n3"
PAT_EXPECT_LOSS=${PAT_EXPECT_LOSS:-0}
PAT_LOST=0

# pat_need: skip (77) without Patroni or etcd.
pat_need() {
    command -v patroni >/dev/null && command -v etcd >/dev/null && return 0
    echo "skip: patroni or etcd is not installed (scripts/deps.sh)"
    exit 77
}

# pat_prepare: how every Patroni test begins (before pat_setup or
# pat_profile): the skips, the private directory of the nodes, and no main
# tenured (the profile's three are pat_tenured's).
pat_prepare() {
    pg_need_server
    pat_need
    pg_private_dir
    SERVER_PID=""
}

# pat_port: a free port not handed out before in this run.
PAT_USED=" "
pat_port() {
    local p
    p=$(pg_cluster port)
    while [[ $PAT_USED == *" $p "* ]]; do p=$(pg_cluster port); done
    PAT_USED+="$p "
    echo "$p"
}

# pat_cluster: "name role state port" of every member, from any node
# that answers within half a second (a paused node's REST API does not),
# the one that answered last first.
PAT_ASK=n1
pat_cluster() {
    local n
    for n in $PAT_ASK $PAT_NODES; do
        if TN_PATRONI_CURL_TIMEOUT=0.5 "$PAT_LC" cluster "${PAT_API[$n]}" 2>/dev/null; then
            PAT_ASK=$n
            return 0
        fi
    done
    return 1
}
pat_leader() { pat_cluster | awk '$2 == "leader" && $3 == "running" {print $1}' | head -1; }

pat_start_node() { # NAME
    local n=$1
    "$PAT_LC" node "$PAT_DIR" "$n" "${PAT_PG[$n]}" "${PAT_API[$n]}" \
        "127.0.0.1:${PAT_EPORT[$n]}" "127.0.0.1:${PAT_RPORT[$n]}"
    TN_PIDS+=("$(cat "$PAT_DIR/$n/patroni.pid")")
}

# Stop the nodes (Patroni, then PostgreSQL) and etcd before the private
# directory goes, and the holder's command with its holder.
pat_cleanup() {
    local n
    pat_stop_holder -9
    [ -n "${PAT_DIR:-}" ] || return 0
    "$PAT_LC" down "$PAT_DIR" >/dev/null 2>&1
    for n in $PAT_NODES; do cp "$PAT_DIR/$n/patroni.log" "$T/patroni-$n.log" 2>/dev/null; done
    [ -n "$CHAOS_OUT" ] && cp "$T"/patroni-n*.log "$CHAOS_OUT/" 2>/dev/null
    return 0
}

pat_setup() {
    PAT_MODE=$1
    PAT_DIR=$PGPRIV/patroni
    mkdir -p "$PAT_DIR"
    trap 'set +e; pat_cleanup; pg_private_cleanup; tn_cleanup' EXIT
    export TN_PATRONI_ETCD_PROXIES=true
    if [ "$PAT_MODE" = async ]; then
        export TN_PATRONI_SYNC_MODE=false TN_PATRONI_SYNC_STRICT=false
        export TN_PATRONI_MAX_LAG=1073741824
    fi
    PAT_ETCD=$(pat_port)
    PAT_ETCD_PEER=$(pat_port)
    "$PAT_LC" etcd "$PAT_DIR" "$PAT_ETCD" "$PAT_ETCD_PEER" || fail "etcd did not start"
    TN_PIDS+=("$(cat "$PAT_DIR/etcd/pid")")
    local n
    for n in $PAT_NODES; do
        PAT_PG[$n]=$(pat_port)
        PAT_API[$n]=$(pat_port)
        PAT_EPORT[$n]=$(pat_port)
        PAT_RPORT[$n]=$(pat_port)
        ha_relay "PAT_ETCD_RELAY[$n]" "${PAT_EPORT[$n]}:$PAT_ETCD"
        ha_relay "PAT_REP_RELAY[$n]" "${PAT_RPORT[$n]}:${PAT_PG[$n]}"
        pat_start_node "$n"
    done
    "$PAT_LC" wait "$PAT_DIR" "${PAT_API[n1]}" 180 >>"$T/patroni.log" 2>&1 ||
        fail "the Patroni cluster did not come up: $(tail -5 "$PAT_DIR/n1/patroni.log")"
    pat_tenured
    pat_probes
}

# Three instances, each naming the nodes in another order.
pat_tenured() {
    local opts="target_session_attrs=read-write&connect_timeout=1" extra="" i order
    [ "$PAT_MODE" = sync ] && extra=--require-sync-standby
    i=0
    for order in "n1 n2 n3" "n3 n2 n1" "n2 n3 n1"; do
        local hosts="" n
        for n in $order; do hosts+="${hosts:+,}127.0.0.1:${PAT_PG[$n]}"; done
        pg_start_instance "$i" "postgresql://tenure@$hosts/tenure?$opts" $extra
        i=$((i + 1))
    done
    HA_URLS="${URLS[0]},${URLS[1]},${URLS[2]}"
}

# The probes (every 50 ms: an acquire on each instance, a write on each
# node) and a holder: tenure run with a 60 s TTL through all three
# instances (a renew every 20 s), its log stamped on the shared clock,
# started again whenever it ends (a lease lost counts, and the next one is
# measured too).
pat_probes() {
    local args=() i n
    for i in 0 1 2; do args+=(--http "i$i=${URLS[$i]}"); done
    for n in $PAT_NODES; do
        args+=(--pg "$n=host=127.0.0.1 port=${PAT_PG[$n]} user=tenure dbname=tenure")
    done
    "$HA_PY" "$PAT_PROBE" run --out "$T/probe.jsonl" "${args[@]}" 2>>"$T/probe.log" &
    PAT_PROBE_PID=$!
    TN_PIDS+=("$PAT_PROBE_PID")
    {
        while [ ! -e "$T/holder.stop" ]; do
            "$TN_BIN/tenure" -v --server "$HA_URLS" run --ttl 60s patroni:holder \
                -- sleep 100000 >/dev/null &
            echo $! >"$T/holder.pid"
            wait $! || true
            sleep 0.5
        done
    } 2> >("$HA_PY" "$PAT_PROBE" stamp --out "$T/holder.jsonl" >/dev/null 2>&1) &
    PAT_HOLDER_PID=$!
    TN_PIDS+=("$PAT_HOLDER_PID")
    # a session with three leases, renewed every 20 s (TTL 60 s) by the
    # Python client given all three instances
    "$HA_PY" "$TN_SRC/tests/tools/ha/session_holder.py" --urls "$HA_URLS" \
        --stop "$T/session.stop" --out "$T/session.jsonl" \
        >"$T/session.txt" 2>>"$T/session.log" &
    PAT_SESSION_PID=$!
    TN_PIDS+=("$PAT_SESSION_PID")
    # TN_PATRONI_METRICS=1: each instance's store metrics every 0.5 s
    if [ "${TN_PATRONI_METRICS:-0}" = 1 ]; then
        while :; do
            for i in 0 1 2; do
                echo "$(date +%T.%N | cut -c1-12) i$i $(curl -s --max-time 0.4 "${URLS[$i]}/metrics" |
                    grep -E '^tenure_(store_ready|pg_connections_ready|pg_listen_ready|pg_sync_standby|pg_inflight_batches|pg_unavailable_total|pg_connects_total) ' |
                    awk '{printf "%s=%s ", substr($1, 8), $2}')"
            done
            sleep 0.5
        done >>"$T/metrics.log" 2>&1 &
        TN_PIDS+=($!)
    fi
}

# pat_stop_holder [-9]: end the holder loop; its tenure run releases the
# lease on SIGTERM (with -9: killed, with the command it runs, whose
# process group it leads).
pat_stop_holder() {
    local pid kid
    [ -n "${PAT_HOLDER_PID:-}" ] || return 0
    touch "$T/holder.stop"
    pid=$(cat "$T/holder.pid" 2>/dev/null || true)
    [ -n "$pid" ] || return 0
    if [ "${1:-}" = -9 ]; then
        for kid in $(pgrep -P "$pid" 2>/dev/null); do kill -9 -- "-$kid" 2>/dev/null; done
        kill -9 "$pid" 2>/dev/null
    else
        kill -TERM "$pid" 2>/dev/null
    fi
    return 0
}

pat_finish() {
    kill "$PAT_PROBE_PID" 2>/dev/null || true
    wait "$PAT_PROBE_PID" 2>/dev/null || true
    pat_stop_holder
    wait "$PAT_HOLDER_PID" 2>/dev/null || true
    touch "$T/session.stop"
    wait "$PAT_SESSION_PID" 2>/dev/null || true
    sleep 0.3 # the stamper writes the last lines
}

# pat_pg_pids NODE: the node's postmaster and its children.
pat_pg_pids() {
    local pm
    pm=$(head -1 "$PAT_DIR/$1/data/postmaster.pid" 2>/dev/null || true)
    [ -n "$pm" ] || return 0
    echo "$pm"
    pgrep -P "$pm" || true
}
pat_patroni_pid() { cat "$PAT_DIR/$1/patroni.pid"; }

# pat_sql NODE SQL: as the tenure role, on the node's database.
pat_sql() {
    "$PG_BINDIR/psql" -X -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${PAT_PG[$1]}" \
        -U tenure tenure -c "$2"
}

# pat_ledger_check WHEN: every grant a client was told of so far is in the
# primary's ledger.
pat_ledger_check() {
    local rc=0 leader
    leader=$(pat_leader)
    [ -n "$leader" ] || fail "$1: no primary to check the ledger on"
    mkdir -p "$T/snap"
    for f in "$T"/h/c*.jsonl; do cp "$f" "$T/snap/"; done
    pat_sql "$leader" "SELECT name || '|' || token FROM lease_grants" >"$T/ledger" ||
        fail "cannot read the ledger of $leader"
    "$HA_PY" "$HA_TOOLS/ha_check.py" ledger "$T/ledger" "$T"/snap/c*.jsonl >"$T/ledger.out" || rc=$?
    echo "$1 ($leader): $(cat "$T/ledger.out")" >>"$T/ledger.log"
    case $rc in
    0) ;;
    1) PAT_LOST=$((PAT_LOST + 1)) ;;
    *) fail "ha_check.py ledger exited $rc: $(cat "$T/ledger.out")" ;;
    esac
    [ "$rc" = 0 ] || [ "$PAT_EXPECT_LOSS" = 1 ] ||
        fail "$1: acknowledged grants missing from the primary $leader: $(cat "$T/ledger.out")"
}

# ---- faults ----------------------------------------------------------------

pat_now_ms() { echo $(($("$CHAOS" now) / 1000000)); }

# The fault's undoing, run once by pat_recover when it is due.
PAT_UNDO="" PAT_UNDO_AT=0

pat_undo_freeze() { kill -CONT $PAT_FROZEN 2>/dev/null || true; chaos_note "node $PAT_OLD resumed"; }
pat_undo_patroni() { pat_start_node "$PAT_OLD"; chaos_note "Patroni of $PAT_OLD restarted"; }
pat_undo_cut() { kill -USR2 "${PAT_ETCD_RELAY[$PAT_OLD]}"; chaos_note "node $PAT_OLD reaches etcd again"; }
pat_undo_etcd() {
    "$PAT_LC" etcd "$PAT_DIR" "$PAT_ETCD" "$PAT_ETCD_PEER" || fail "etcd did not restart"
    TN_PIDS+=("$(cat "$PAT_DIR/etcd/pid")")
    chaos_note "etcd restarted"
}
pat_undo_double() {
    PAT_UNDO_NS=$("$CHAOS" now)
    pat_start_node "$PAT_OLD"
    pat_start_node "$PAT_OTHER"
    chaos_note "nodes $PAT_OLD and $PAT_OTHER restarted"
}

# pat_kill_node NODE: kill -9 its Patroni and every postgres process.
pat_kill_node() {
    # shellcheck disable=SC2046
    kill -9 "$(pat_patroni_pid "$1")" $(pat_pg_pids "$1") 2>/dev/null || true
}

pat_inject() { # KIND OLD
    local old=$2 ms
    case $1 in
    postmaster)
        kill -9 "$(head -1 "$PAT_DIR/$old/data/postmaster.pid")" ;;
    patroni)
        kill -9 "$(pat_patroni_pid "$old")"
        PAT_UNDO=pat_undo_patroni PAT_UNDO_AT=$(($(pat_now_ms) + $(chaos_rand 12000 20000))) ;;
    freeze)
        # Patroni first, then the postmaster (no new child), then its children
        PAT_FROZEN="$(pat_patroni_pid "$old") $(pat_pg_pids "$old" | tr '\n' ' ')"
        # shellcheck disable=SC2086
        kill -STOP $PAT_FROZEN
        ms=$(chaos_rand 15000 25000)
        PAT_UNDO=pat_undo_freeze PAT_UNDO_AT=$(($(pat_now_ms) + ms)) ;;
    etcd-cut)
        kill -USR1 "${PAT_ETCD_RELAY[$old]}"
        PAT_UNDO=pat_undo_cut PAT_UNDO_AT=$(($(pat_now_ms) + 15000)) ;;
    etcd-kill)
        kill -9 "$(cat "$PAT_DIR/etcd/pid")"
        PAT_UNDO=pat_undo_etcd PAT_UNDO_AT=$(($(pat_now_ms) + $(chaos_rand 3000 8000))) ;;
    double)
        PAT_OTHER=$(pat_cluster | awk -v o="$old" '$1 != o && $2 == "sync_standby" {print $1}' | head -1)
        [ -n "$PAT_OTHER" ] || PAT_OTHER=$(pat_cluster | awk -v o="$old" '$1 != o {print $1}' | head -1)
        pat_kill_node "$old"
        pat_kill_node "$PAT_OTHER"
        chaos_note "and standby $PAT_OTHER killed"
        PAT_UNDO=pat_undo_double PAT_UNDO_AT=$(($(pat_now_ms) + 15000)) ;;
    *) fail "unknown fault $1" ;;
    esac
}

# pat_whole OLD: the cluster is whole again: a running primary, OLD back
# as a running replica, every node running, and (synchronous mode) a
# synchronous standby.
pat_whole() {
    local c
    c=$(pat_cluster) || return 1
    [ "$(awk '$3 == "running"' <<<"$c" | wc -l)" = 3 ] || return 1
    grep -q ' leader running' <<<"$c" || return 1
    [ "$PAT_MODE" = async ] || grep -q ' sync_standby running' <<<"$c" || return 1
    return 0
}

# pat_no_writes T_FAULT: with the primary and a standby gone, the node
# promoted has no standby, and strict synchronous mode commits nothing
# until one is back (the probes' writes; those already waiting for an
# acknowledgement when the fault came get half a second).
pat_no_writes() {
    local n
    n=$("$HA_PY" "$PAT_PROBE" writes "$T/probe.jsonl" $(($1 + 500000000)) "$PAT_UNDO_NS")
    [ "$n" = 0 ] || fail "$n writes committed with no synchronous standby after the double failure"
    echo "double failure: no write committed in the $((($PAT_UNDO_NS - $1) / 1000000)) ms before the nodes came back" >>"$T/ledger.log"
}

# pat_one_primary OLD T_NEW T_END: once another node was promoted (seen
# at T_NEW), the old primary committed nothing more, whether it was
# paused, cut from etcd or left without its Patroni: never two primaries.
pat_one_primary() {
    local n
    n=$("$HA_PY" "$PAT_PROBE" writes "$T/probe.jsonl" $(($2 + 500000000)) "$3" "$1")
    [ "$n" = 0 ] || fail "the deposed primary $1 committed $n writes after another node was promoted"
}

# pat_history_check WHEN: the history so far checks clean (tenure-check;
# operations still in flight count as of unknown outcome).
pat_history_check() {
    local rc=0
    mkdir -p "$T/snap"
    cat "$T"/h/*.jsonl >"$T/snap/history.jsonl"
    "$TN_BIN/tenure-check" "$T/snap/history.jsonl" >"$T/snap/report.json" 2>&1 || rc=$?
    [ "$rc" = 0 ] || [ "$PAT_EXPECT_LOSS" = 1 ] ||
        fail "$1: tenure-check exit $rc on the history so far: $(head -c 2000 "$T/snap/report.json")"
}

# pat_rewinds NODE: the pg_rewind runs Patroni has started on NODE.
pat_rewinds() {
    grep -c 'running pg_rewind from .*dbname=' "$PAT_DIR/$1/patroni.log" || true
}

# pat_fault KIND: inject it on the primary, wait for the cluster to be
# whole again, note what happened when, check the ledger.
pat_fault() {
    local kind=$1 old t_fault t_new=0 end seen_new="" whole_ns="" c role rewinds changed=0
    old=$(pat_leader)
    [ -n "$old" ] || fail "no primary before fault $kind: $(pat_cluster)"
    PAT_OLD=$old PAT_UNDO="" PAT_UNDO_AT=0
    PAT_FAULTS=$((PAT_FAULTS + 1))
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    rewinds=$(pat_rewinds "$old")
    # Commits in flight: the primary's replication stream held back a
    # moment, so that commits are on it and not yet on any standby.
    kill -USR1 "${PAT_REP_RELAY[$old]}"
    chaos_sleep_ms "$(chaos_rand 300 1200)"
    t_fault=$("$CHAOS" now)
    chaos_note "fault: $kind on primary $old"
    pat_inject "$kind" "$old"
    kill -USR2 "${PAT_REP_RELAY[$old]}"
    end=$(($(pat_now_ms) + 180000))
    while [ "$(pat_now_ms)" -lt "$end" ]; do
        if [ -n "$PAT_UNDO" ] && [ "$(pat_now_ms)" -ge "$PAT_UNDO_AT" ]; then
            "$PAT_UNDO"
            PAT_UNDO=""
        fi
        c=$(pat_cluster || true)
        local leader
        leader=$(awk '$2 == "leader" && $3 == "running" {print $1}' <<<"$c" | head -1)
        if [ -z "$seen_new" ] && [ -n "$leader" ] && [ "$leader" != "$old" ]; then
            chaos_note "new primary $leader (Patroni)"
            t_new=$("$CHAOS" now)
            seen_new=$leader
            PAT_FAILOVERS=$((PAT_FAILOVERS + 1))
        fi
        # the fault has been seen once the primary is not what it was
        # (or nothing answers): before that the cluster still looks whole
        [ -n "$c" ] && grep -q "^$old leader running" <<<"$c" || changed=1
        # whole, and still whole 3 s later: a node that crashed is first
        # started as it was, then stopped again to be rewound
        if [ -z "$PAT_UNDO" ] && [ "$changed" = 1 ] && pat_whole; then
            [ -n "$whole_ns" ] || whole_ns=$("$CHAOS" now)
            [ $(($("$CHAOS" now) - whole_ns)) -ge 3000000000 ] && break
        else
            whole_ns=""
        fi
        sleep 0.2
    done
    pat_whole || fail "the cluster was not whole 180 s after fault $kind on $old: $(pat_cluster)"
    role=$(pat_cluster | awk -v o="$old" '$1 == o {print $2}')
    [ -n "$seen_new" ] && chaos_note "old primary $old back as a $role"
    local now_ns rw serve
    now_ns=$("$CHAOS" now)
    rw=$(($(pat_rewinds "$old") - rewinds))
    pat_ledger_check "fault $PAT_FAULTS $kind"
    pat_history_check "fault $PAT_FAULTS $kind"
    [ "$kind" != double ] || pat_no_writes "$t_fault"
    [ -z "$seen_new" ] || pat_one_primary "$old" "$t_new" "$now_ns"
    serve=$("$HA_PY" "$PAT_PROBE" delays "$T/probe.jsonl" "$t_fault" --end "$now_ns" \
        --on "${seen_new:-$old}" || true)
    echo "fault=$PAT_FAULTS kind=$kind from=$old to=${seen_new:-$old} rejoined_ms=$(((whole_ns - t_fault) / 1000000)) rejoined_as=$role rewinds=$rw $serve" |
        tee -a "$T/faults.log"
}

# pat_report: per fault, one line with the client-side window
# (ha_check.py windows) and the probes' figures, then the summary.
pat_report() {
    "$HA_PY" "$HA_TOOLS/ha_check.py" windows "$T/history.jsonl" >"$T/windows" ||
        fail "ha_check.py windows failed"
    "$HA_PY" "$HA_TOOLS/ha_check.py" patroni "$T/windows" "$T/faults.log" \
        "$T/holder.jsonl" "$T/session.txt" >"$T/report" || fail "ha_check.py patroni failed"
    cat "$T/report"
    PAT_SUMMARY=$(tail -1 "$T/report")
    [ -n "$CHAOS_OUT" ] && cp "$T/report" "$T/faults.log" "$T/ledger.log" "$T/holder.jsonl" \
        "$T/session.jsonl" "$CHAOS_OUT/" 2>/dev/null
    return 0
}

# pat_profile NAME "KINDS": the chaos profile (t779, t781): recording
# clients on a synchronous cluster while faults come, one every 1-3 s
# after the cluster is whole again, for TN_CHAOS_SECONDS (default 45; a
# fault begun runs to its end): the KINDS in turn first, then drawn at
# random (TN_PATRONI_KINDS: only these, in turn).  The clients go on 5 s
# past the last recovery, so that every fault's window ends in grants;
# then the checks and the report.
pat_profile() {
    local secs=${TN_CHAOS_SECONDS:-45} step=0 k kinds end
    pat_setup sync
    chaos_init "$1"
    URL=$HA_URLS
    chaos_clients 3 86400 --ttl-min 200 --ttl-max 2000 --names 16 --stop-file "$T/stop"
    read -r -a kinds <<<"${TN_PATRONI_KINDS:-$2}"
    end=$(($(pat_now_ms) + secs * 1000))
    while [ "$(pat_now_ms)" -lt "$end" ]; do
        chaos_sleep_ms "$(chaos_rand 1000 3000)"
        if [ -n "${TN_PATRONI_KINDS:-}" ] || [ "$step" -lt ${#kinds[@]} ]; then
            k=${kinds[$((step % ${#kinds[@]}))]}
        else
            k=${kinds[$((RANDOM % ${#kinds[@]}))]}
        fi
        pat_fault "$k"
        step=$((step + 1))
    done
    chaos_sleep_ms 5000
    touch "$T/stop"
    chaos_finish
    pat_finish
    chaos_check 20
    [ "$PAT_FAILOVERS" -ge 1 ] || fail "no failover happened ($CHAOS_SUMMARY)"
    pat_ledger_check "end"
    pat_report
    # the session kept its leases: every renew within the TTL, each name
    # still its own with its token at the end
    grep -q '^patroni-session .* lost=0$' "$T/session.txt" ||
        fail "the session lost its leases: $(cat "$T/session.txt") (see session.jsonl)"
}
