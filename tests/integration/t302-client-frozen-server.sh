#!/usr/bin/env bash
# A server frozen with SIGSTOP: the keepalive reports the loss ("expired")
# exactly once, after the last renew's safe time and before the lease could
# end on the server (last successful renew sent + TTL), and the lease never
# shows as held after that.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
tn_start_server
TTL=1000

"$PROBE" keep "$URL" frozen:1 $TTL 15000 >"$T/probe" 2>&1 &
P=$!
TN_CLIENT_PIDS+=("$P")
wait_grep "$T/probe" 'renewed lease' 2 5 || fail "no renews: $(cat "$T/probe")"
t_stop=$(mono)
kill -STOP "$SERVER_PID"
wait_grep "$T/probe" '^end ' 1 5 || { kill -CONT "$SERVER_PID"; fail "no loss reported: $(cat "$T/probe")"; }
kill -CONT "$SERVER_PID"
wait_exit "$P" 10 || fail "probe did not finish"
end=$(grep '^end ' "$T/probe")
cb_at=$(kv "$end" cb_at)
[ "$(kv "$end" reason)" = expired ] || fail "reason: $end"
[ "$(kv "$end" calls)" = 1 ] || fail "callback must run once: $end"
[ "$(kv "$end" safe_at_cb)" = 0 ] || fail "safe time left at the report: $end"
[ "$(kv "$end" held_after)" = -1 ] || fail "held after the loss: $end"
# Every successful renew was sent before t_stop, so the server cannot have
# let the lease go before t_stop + TTL: the report must come earlier.
[ "$cb_at" -lt $((t_stop + TTL)) ] || fail "loss reported at $cb_at, after $((t_stop + TTL))"
last_held=$(kv "$end" last_held_at)
[ "$last_held" -le "$cb_at" ] || fail "held at $last_held after the report at $cb_at"
[ "$last_held" -lt $((t_stop + TTL)) ] || fail "held at $last_held, past $((t_stop + TTL))"
# Not early either: the last renew before the freeze gave at least
# TTL/3 (the renew period) of safe time beyond t_stop minus the margin.
[ "$cb_at" -ge $((t_stop + TTL / 3)) ] || fail "loss reported too early: $cb_at vs stop $t_stop"
pass "frozen server: loss reported once at $((cb_at - t_stop)) ms after the freeze (TTL $TTL)"
