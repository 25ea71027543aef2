#!/usr/bin/env bash
# Chaos, short profile: sessions (docs/safety/sessions.md).  3 client
# processes of 3 session workers each: every worker holds many leases under
# one session (batch claims of up to 12 of 48 names, batch releases), keeps
# them with one renew a round, writes every lease it holds to the fenced
# sink each round, then ends its session or abandons it to expire.  Faults,
# drawn at random: kill -9 of tenured (restarted on the same data
# directory 0-200 ms later) two times in six, or SIGSTOP of a client
# process for 1.2-2.4 s, past its sessions' TTLs (300-900 ms), mostly the
# one that wrote to the sink last: its sessions expire, their names go to other
# workers with higher tokens, and on SIGCONT its writes with the old tokens
# must be refused by the fence.  The merged history must check clean, with
# sessions, claims and zombie writes refused in it.  Like t763, the
# clients may run up to four times SECONDS; the run ends at the first
# check past SECONDS that finds a refused write.
# TN_CHAOS_SEED replays a schedule; TN_CHAOS_SECONDS lengthens the run;
# TN_CHAOS_STORE=pg runs it on PostgreSQL (t783): restarts of the database
# two times in six, kill -9 of tenured one in six, SIGSTOP of a client
# three in six.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-chaos.sh"
secs=${TN_CHAOS_SECONDS:-12}
profile=sessions
if [ "${TN_CHAOS_STORE:-embedded}" = pg ]; then
    . "$(dirname "$0")/lib-pg.sh"
    pg_need_server
    pg_private_dir
    db="$PGPRIV/db"
    dbport=$(pg_cluster port)
    pg_cluster init "$db" "$dbport" >"$T/pg.log" 2>&1 ||
        fail "cannot start PostgreSQL: $(tail -5 "$T/pg.log")"
    CHAOS_SERVER_ARGS=(--store "postgresql://postgres@127.0.0.1:$dbport/postgres")
    profile=sessions-pg
fi
chaos_init "$profile"
chaos_server "${CHAOS_SERVER_ARGS[@]}"
chaos_session_support
chaos_clients 3 $((secs * 4)) --sessions 12 --names 48 --ttl-min 300 \
    --ttl-max 900 --max-rounds 8 --stop-file "$T/stop"
t_enough=$((SECONDS + secs))
while chaos_running; do
    if [ ! -e "$T/stop" ] && [ "$SECONDS" -ge "$t_enough" ] &&
        [ "$(chaos_rejects)" -ge 1 ]; then
        chaos_note "a zombie write was refused: the run ends"
        touch "$T/stop"
    fi
    chaos_sleep_ms "$(chaos_rand 300 1000)"
    [ -e "$T/stop" ] && continue # no more faults: let the clients end
    chaos_running || break
    case $profile/$((RANDOM % 6)) in
    sessions-pg/0 | sessions-pg/1) chaos_pg_restart "$db" ;;
    sessions-pg/2 | sessions/0 | sessions/1) chaos_kill9 "$(chaos_rand 0 200)" ;;
    */3) chaos_stop_client "$(chaos_rand 1200 2400)" ;;
    *) chaos_stop_client "$(chaos_rand 1200 2400)" latest ;;
    esac
done
chaos_finish
chaos_check
chaos_session_counts
[ "$CHAOS_REJECT" -ge 1 ] || fail "no zombie write reached the fence ($CHAOS_SUMMARY)"
[ "$CHAOS_SESSIONS" -ge 5 ] || fail "only $CHAOS_SESSIONS sessions opened ($CHAOS_SUMMARY)"
[ "$CHAOS_LOST" -ge 1 ] || fail "no session holder learned that its session ended ($CHAOS_SUMMARY)"
pass "sessions under faults: $CHAOS_SUMMARY sessions=$CHAOS_SESSIONS claims=$CHAOS_CLAIMS lost=$CHAOS_LOST (zombie writes refused: $CHAOS_REJECT), no violation"
