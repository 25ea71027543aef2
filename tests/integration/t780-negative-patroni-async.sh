#!/usr/bin/env bash
# Negative control of the Patroni profile (docs/HA.md): the same cluster,
# clients and fault as t779 with synchronous_mode off (and any replica
# allowed to be promoted however far behind, maximum_lag_on_failover 1
# GiB), tenured without --require-sync-standby.  On loopback an
# asynchronous replica is nearly never behind, so the primary's
# replication stream is cut silently for 1.5 s before its postmaster is
# killed, and stays cut until Patroni has promoted another node: the
# grants acknowledged meanwhile exist only on the dead primary, which
# Patroni then rewinds.  The run must be caught: a grant a client was told
# of missing from the new primary's ledger, or tenure-check finding a
# token reissued or two holders.  In t779 the same cut is harmless: there
# the commits wait for the synchronous standby and are never acknowledged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-patroni.sh"
pat_prepare
PAT_EXPECT_LOSS=1
pat_setup async
chaos_init patroni-async
URL=$HA_URLS
chaos_clients 3 20 --ttl-min 200 --ttl-max 2000 --names 16
chaos_sleep_ms 3000
old=$(pat_leader)
[ -n "$old" ] || fail "no primary: $(pat_cluster)"
CHAOS_FAULTS=1
chaos_note "replication of primary $old cut (silent)"
kill -USR1 "${PAT_REP_RELAY[$old]}"
chaos_sleep_ms 1500
chaos_note "fault: postmaster on primary $old"
kill -9 "$(head -1 "$PAT_DIR/$old/data/postmaster.pid")"
new=""
for _ in $(seq 1 300); do
    new=$(pat_leader)
    [ -n "$new" ] && [ "$new" != "$old" ] && break
    sleep 0.2
done
[ -n "$new" ] && [ "$new" != "$old" ] || fail "Patroni promoted no other node: $(pat_cluster)"
chaos_note "new primary $new (Patroni)"
kill -USR2 "${PAT_REP_RELAY[$old]}"
pat_ledger_check "failover"
chaos_finish
pat_finish
ha_caught "asynchronous replication under Patroni" "$PAT_LOST" "$(head -1 "$T/ledger.log")"
