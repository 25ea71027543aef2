#!/usr/bin/env bash
# Chaos, short profile: PostgreSQL under tenured (--store postgresql://, a
# private throw-away cluster) crashes (SIGKILL of the postmaster) or stops
# (immediate shutdown) for 0.3-1.5 s and starts again, under the recording
# clients.  tenured must answer 503 meanwhile and reconnect by itself; the
# history must check clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
. "$(dirname "$0")/lib-chaos.sh"
pg_need_server
secs=${TN_CHAOS_SECONDS:-8}
pg_private_dir
db="$PGPRIV/db"
dbport=$(pg_cluster port)
pg_cluster init "$db" "$dbport" >"$T/pg.log" 2>&1 || fail "cannot start PostgreSQL: $(tail -5 "$T/pg.log")"
CHAOS_SERVER_ARGS=(--store "postgresql://postgres@127.0.0.1:$dbport/postgres")
chaos_init pg-restart
chaos_server "${CHAOS_SERVER_ARGS[@]}"
chaos_clients 3 "$secs" --ttl-min 300 --ttl-max 900 --names 8
while chaos_running; do
    chaos_sleep_ms "$(chaos_rand 400 1200)"
    chaos_running || break
    chaos_pg_restart "$db"
done
chaos_finish
chaos_check
pass "PostgreSQL restarts: $CHAOS_SUMMARY, no violation"
