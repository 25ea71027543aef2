#!/usr/bin/env bash
# A database that forgets (docs/HA.md, "The token floor"): the PostgreSQL
# node tenured uses is replaced, with tenured connected, by a copy of its
# data directory taken earlier, so that the grants acknowledged since are
# gone and the sequence is back where it was.  tenured must not issue any
# of the forgotten tokens again: after it reconnects, the next grant's
# token is above every token it acknowledged (its token floor, kept in its
# data dir, lifts the sequence), it logs the loss and raises
# tenure_pg_token_floor_alarms_total.  The same after a restart of tenured
# (the floor is read from disk), and the file is not written once per
# grant.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need_server
need_tools
pg_private_dir
port=$(pg_cluster port)
pg_cluster init "$PGPRIV/a" "$port" >"$T/pg.log" 2>&1 || fail "cannot start PostgreSQL"
db="postgresql://postgres@127.0.0.1:$port/postgres?connect_timeout=1"
data=$PGPRIV/a/data

# snapshot DIR: stop the node, copy its data directory, start it again.
snapshot() {
    pg_cluster stop "$PGPRIV/a"
    rm -rf "$1"
    cp -a "$data" "$1"
    pg_cluster start "$PGPRIV/a" >>"$T/pg.log" 2>&1 || fail "cannot restart PostgreSQL"
}
# roll_back DIR: stop the node, put the copy DIR in place, start it.
roll_back() {
    pg_cluster stop "$PGPRIV/a"
    rm -rf "$data"
    cp -a "$1" "$data"
    pg_cluster start "$PGPRIV/a" >>"$T/pg.log" 2>&1 || fail "cannot start the rolled back node"
}
# ready_grant NAME: acquire NAME on instance 0, waiting (15 s at most)
# while it is reconnecting; TOKEN is the grant's token.
ready_grant() {
    local i
    for i in $(seq 1 150); do
        acquire "$1" o 60000
        if [ "$CODE" = 201 ]; then
            TOKEN=$(jget token)
            return 0
        fi
        [ "$CODE" = 503 ] || fail "acquire $1: $CODE $BODY"
        sleep 0.1
    done
    fail "instance 0 did not grant $1: $CODE $BODY"
}
# grants N PREFIX: N acquires on instance 0; TOP is the highest token.
grants() {
    local i
    for i in $(seq 1 "$1"); do
        ready_grant "$2:$i"
        [ "$TOKEN" -gt "${TOP:-0}" ] && TOP=$TOKEN
    done
    return 0
}
stored_top() { pg_cluster sql "$port" "SELECT coalesce(max(token), 0) FROM lease_grants"; }

pg_start_instance 0 "$db"
URL=${URLS[0]}
grants 3 before
snapshot "$PGPRIV/snap1"
grants 40 after
acked=$TOP

# 1. Rolled back under a connected instance.
roll_back "$PGPRIV/snap1"
forgot=$(stored_top)
[ "$forgot" -lt "$acked" ] ||
    fail "the copy was not older: the restored node has token $forgot, acknowledged $acked"
ready_grant "again:1"
[ "$TOKEN" -gt "$acked" ] ||
    fail "token $TOKEN issued again after the database forgot tokens $((forgot + 1))..$acked (acknowledged up to $acked)"
pg_wait_for 5 grep -q 'the database has forgotten tokens' "$T/tenured0.log" ||
    fail "no alarm in the log: $(tail -5 "$T/tenured0.log")"
[ "$(pg_metric "$URL" tenure_pg_token_floor_alarms_total)" -ge 1 ] ||
    fail "tenure_pg_token_floor_alarms_total did not move"
writes=$(pg_metric "$URL" tenure_pg_token_floor_writes_total)
[ "$writes" -ge 1 ] && [ "$writes" -lt 10 ] ||
    fail "$writes floor writes for 45 grants: expected a few reservations, not one per grant"
pass "rolled back to token $forgot under a connected instance that had acknowledged $acked: next token $TOKEN, alarm logged, $writes floor writes"

# 2. Rolled back while tenured was down: the floor comes from its file.
TOP=$TOKEN
grants 5 more
acked=$TOP
snapshot "$PGPRIV/snap2"
grants 20 late
acked=$TOP
pg_kill_instance 0
roll_back "$PGPRIV/snap2"
forgot=$(stored_top)
[ "$forgot" -lt "$acked" ] || fail "the second copy was not older ($forgot, acknowledged $acked)"
pg_restart_instance 0
tn_wait_ready "$URL" || fail "instance 0 did not come back"
ready_grant "again:2"
[ "$TOKEN" -gt "$acked" ] ||
    fail "after a restart, token $TOKEN issued again (the database forgot $((forgot + 1))..$acked)"
grep -q 'token floor read' "$T/tenured0.log" || fail "the restarted instance did not read its floor"
pass "rolled back to $forgot while tenured was down (it had acknowledged $acked): after its restart the next token is $TOKEN"
