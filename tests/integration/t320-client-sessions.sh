#!/usr/bin/env bash
# A session kept by libtenure's keepalive, with five leases claimed under
# it (tn-client-probe session): held through many renews, then
# 1. the server frozen (SIGSTOP): the keepalive reports every lease once,
#    then the session once, "expired", after the last renew's safe time and
#    before anything could end on the server (last renew sent + TTL); no
#    lease reads held after that;
# 2. the session force-ended by an admin: "lost", every lease once;
# 3. ended by its holder at the end of the hold: "released", every lease
#    once;
# 4. with watch_events, a force end is heard from the event stream
#    (session_ended) long before the renew timer (a third of a 30 s TTL)
#    would have found it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
tn_start_server
need_sessions
TTL=1000

check_end() { # FILE REASON RC: the end line says REASON, once, for all five
    local end
    end=$(grep '^end ' "$1") || fail "no end line: $(cat "$1")"
    [ "$(kv "$end" reason)" = "$2" ] || fail "reason: $end"
    [ "$(kv "$end" rc)" = "$3" ] || fail "rc: $end"
    [ "$(kv "$end" calls)" = 1 ] || fail "the session's callback must run once: $end"
    [ "$(kv "$end" lease_calls)" = 5 ] || fail "each of 5 leases once: $end"
    [ "$(kv "$end" leases_before)" = 5 ] || fail "leases before the session: $end"
    [ "$(kv "$end" held_after)" = -1 ] || fail "a lease held after the end: $end"
    ! grep -q '^error=' "$1" || fail "$(grep '^error=' "$1")"
}

# 1. The server freezes.
"$PROBE" session "$URL" frozen: $TTL 15000 5 >"$T/frozen" 2>&1 &
P=$!
TN_CLIENT_PIDS+=("$P")
wait_grep "$T/frozen" 'renewed session' 3 10 || fail "no renews: $(cat "$T/frozen")"
t_stop=$(mono)
kill -STOP "$SERVER_PID"
wait_grep "$T/frozen" '^end ' 1 10 || { kill -CONT "$SERVER_PID"; fail "no loss: $(cat "$T/frozen")"; }
kill -CONT "$SERVER_PID"
wait_exit "$P" 10 || fail "probe did not finish"
check_end "$T/frozen" expired TN_EEXPIRED
end=$(grep '^end ' "$T/frozen")
cb_at=$(kv "$end" cb_at)
last_held=$(kv "$end" last_held_at)
[ "$cb_at" -lt $((t_stop + TTL)) ] || fail "reported at $cb_at, after $((t_stop + TTL))"
[ "$last_held" -le "$cb_at" ] || fail "held at $last_held after the report at $cb_at"
[ "$cb_at" -ge $((t_stop + TTL / 3)) ] || fail "reported too early: $cb_at vs stop $t_stop"

# 2. An admin force-ends the session.
"$PROBE" session "$URL" forced: $TTL 15000 5 >"$T/forced" 2>&1 &
P=$!
TN_CLIENT_PIDS+=("$P")
wait_grep "$T/forced" 'renewed session' 2 10 || fail "no renews: $(cat "$T/forced")"
sid=$(sed -n 's/^session id=\([0-9a-f]*\) .*/\1/p' "$T/forced")
req DELETE "/v1/sessions/$sid?force=true"
expect_code 204 "force end"
wait_exit "$P" 10 || fail "probe did not finish: $(cat "$T/forced")"
check_end "$T/forced" lost TN_ELOST
req GET /v1/leases/forced:0
expect_code 404 "a lease of the force-ended session"

# 3. Held to the end, then ended by its holder.
"$PROBE" session "$URL" ended: $TTL 2500 5 >"$T/ended" 2>&1 || fail "probe: $(cat "$T/ended")"
check_end "$T/ended" released TN_OK
[ "$(grep -c 'renewed session' "$T/ended")" -ge 5 ] || fail "fewer renews than a 2.5 s hold needs: $(cat "$T/ended")"
req GET /v1/leases/ended:4
expect_code 404 "a lease of the ended session"
pass "a kept session: five leases reported once each, then the session: expired (server frozen), lost (force end), released (end)"

# 4. Heard from the event stream.
TN_PROBE_WATCH=1 "$PROBE" session "$URL" watched: 30000 20000 5 >"$T/watched" 2>&1 &
P=$!
TN_CLIENT_PIDS+=("$P")
wait_grep "$T/watched" '^session id=' 1 10 || fail "no session: $(cat "$T/watched")"
tn_wait_subscribers 1
sid=$(sed -n 's/^session id=\([0-9a-f]*\) .*/\1/p' "$T/watched")
t_force=$(mono)
req DELETE "/v1/sessions/$sid?force=true"
expect_code 204 "force end"
wait_exit "$P" 15 || fail "probe did not finish: $(cat "$T/watched")"
TTL=30000
check_end "$T/watched" lost TN_ELOST
cb_at=$(kv "$(grep '^end ' "$T/watched")" cb_at)
[ $((cb_at - t_force)) -lt 3000 ] || fail "the event stream's session_ended took $((cb_at - t_force)) ms"
! grep -q 'renewed session' "$T/watched" || fail "found by a renew, not by the event: $(cat "$T/watched")"
pass "with watch_events, the force-ended session was reported lost after $((cb_at - t_force)) ms (renew timer: 10 s)"
