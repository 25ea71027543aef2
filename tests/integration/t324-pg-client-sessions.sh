#!/usr/bin/env bash
# Sessions of libtenure on two tenured over one PostgreSQL:
# 1. a session kept by the keepalive, five leases under it, given both
#    instances: the instance it talks to is killed (-9); the next session
#    renew lands on the other one within the TTL, no lease is reported
#    lost, and at the end the session is released, every lease once;
# 2. the session conformance scenarios, through the second instance.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need
pg_fresh_schema "t324_$$"
pg_start_instance 0 "$PG_URL"
pg_start_instance 1 "$PG_URL"
URL=${URLS[1]}
need_sessions
both="${URLS[0]},${URLS[1]}"

# 1. The instance of the session's renews dies.
"$PROBE" session "$both" ha:s 2000 6000 5 >"$T/probe" 2>&1 &
P=$!
TN_CLIENT_PIDS+=("$P")
wait_grep "$T/probe" 'renewed session' 2 10 || fail "no renews: $(cat "$T/probe")"
pg_kill_instance 0
kill_at=$(mono)
wait_exit "$P" 30 || fail "probe did not finish"
[ "$RC" = 0 ] || fail "probe failed: $(cat "$T/probe")"
end=$(grep '^end ' "$T/probe") || fail "no end: $(cat "$T/probe")"
[ "$(kv "$end" reason)" = released ] || fail "the session was not held to its end: $end"
[ "$(kv "$end" lease_calls)" = 5 ] || fail "each lease once: $end"
at=$(sed -n 's/^log at=\([0-9]*\) renewed session.*/\1/p' "$T/probe" |
    awk -v k="$kill_at" '$1 > k { print; exit }')
[ -n "$at" ] || fail "no session renew after the kill: $(cat "$T/probe")"
pass "a kept session moved to the other instance $((at - kill_at)) ms after the kill (TTL 2000), its five leases held to the end"

# 2. The session scenarios on PostgreSQL.
"$TN_BIN/tn-conformance" "$URL" "$TN_SRC"/tests/conformance/session_*.json >"$T/conf" 2>&1 ||
    fail "session scenarios on PostgreSQL: $(cat "$T/conf")"
grep -q ' 0 skipped' "$T/conf" || fail "scenarios skipped: $(cat "$T/conf")"
pass "session scenarios on PostgreSQL: $(tail -1 "$T/conf")"
