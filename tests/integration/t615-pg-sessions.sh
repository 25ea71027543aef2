#!/usr/bin/env bash
# Sessions over HTTP on PostgreSQL: the checks t130 runs on the embedded
# store (lib-sessions.sh), every route, shape, refusal, event, the restart
# rule and capacity, here against the PostgreSQL store.  Skips while the
# store answers the session routes 501 (after the checks that need none).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
. "$(dirname "$0")/lib-sessions.sh"
need_tools
pg_need
pg_fresh_schema "t615_$$"
ARGS=(--store "$PG_URL" --max-batch-names 64 --max-batch-body-bytes 16384)
tn_start_server "${ARGS[@]}"
sessions_body_caps
sessions_need
sessions_big_claim
sessions_battery
sessions_restart "${ARGS[@]}"
tn_kill_server
pg_fresh_schema "t615c_$$"
tn_start_server --store "$PG_URL" --max-batch-names 64 --max-sessions 2 --max-leases 3
sessions_capacity
