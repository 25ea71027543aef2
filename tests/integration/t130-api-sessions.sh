#!/usr/bin/env bash
# Sessions over HTTP on the embedded store (docs/SESSIONS.md, docs/API.md
# "Sessions"): every route in its documented shape and status (open, get,
# list, renew, end, force end, acquire under a session, batch claim and
# release), bad input refused with 400 and nothing changed (wrong types,
# duplicates, a name twice, too many names, bad ids), 403 for a wrong
# secret, 409 lost for an ended or unknown session, 413 from the head
# alone past each route's body cap, session events on every stream, the
# restart rule, and 503 capacity at --max-sessions.  The same checks run
# on PostgreSQL in t615 (lib-sessions.sh).  Skips while the store answers
# the session routes 501 (after the checks that need no store).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-sessions.sh"
need_tools
ARGS=(--max-batch-names 64 --max-batch-body-bytes 16384)
tn_start_server "${ARGS[@]}"
sessions_body_caps
sessions_need
sessions_big_claim
sessions_battery
sessions_restart "${ARGS[@]}"
tn_kill_server
TN_DATA_DIR=$T/data-cap tn_start_server "${ARGS[@]}" --max-sessions 2 --max-leases 3
sessions_capacity
