#!/usr/bin/env bash
# Chaos, HA profile (docs/HA.md): a PostgreSQL primary with a synchronous
# standby (synchronous_standby_names on both nodes, tenured's sessions on
# synchronous_commit = remote_apply), three tenured with
# --require-sync-standby on a connection string naming both nodes
# (target_session_attrs=read-write), recording clients spread over the
# three.  The nemesis: failovers (the replication stream cut silently, then
# kill -9 of the primary, promotion of the standby, the dead node rebuilt
# as the new standby), kill -9 of tenured instances, and a silent partition
# of one instance from the database.  After every promotion every grant a
# client was told of must be in the promoted primary's ledger; at the end
# the whole history must check clean.  Prints, per failover, how long the
# clients could not get a lease and how many acquires were refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
. "$(dirname "$0")/lib-chaos.sh"
. "$(dirname "$0")/lib-ha.sh"
pg_need_server
secs=${TN_CHAOS_SECONDS:-30}
pg_private_dir
SERVER_PID=""
ha_setup sync
chaos_init ha-failover
URL=$HA_URLS
chaos_clients 3 "$secs" --ttl-min 200 --ttl-max 2000 --names 16
step=0
while chaos_running; do
    chaos_sleep_ms "$(chaos_rand 800 2000)"
    chaos_running || break
    # failover, kill, partition, failover first; then drawn at random
    f=$step
    [ "$step" -ge 4 ] && f=$((RANDOM % 5))
    case $f in
    0 | 3 | 4) ha_failover ;;
    1) ha_kill_instance ;;
    2) ha_partition "$(chaos_rand 1000 4000)" ;;
    esac
    step=$((step + 1))
done
chaos_finish
chaos_check 20
[ "$HA_FAILOVERS" -ge 1 ] || fail "no failover happened ($CHAOS_SUMMARY)"
ha_ledger_check "end"
ha_windows
pass "HA failover: $CHAOS_SUMMARY failovers=$HA_FAILOVERS, no violation, no acknowledged grant lost; ${HA_SUMMARY#ha-windows: }"
