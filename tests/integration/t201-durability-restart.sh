#!/usr/bin/env bash
# Restarts on the same data dir, after SIGTERM and after kill -9: tokens keep
# increasing, live leases stay held (same owner, same token) and can be
# renewed by their holder and retried by request_id, floors of released and
# expired names are kept, and a lease live at a kill -9 is not granted to
# anyone else before its full TTL has passed since the restart.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools
tn_start_server

acquire "d:live" a 60000 '"request_id":"rq-1"'
expect_code 201 "acquire d:live"
t_live=$(jget token)
s_live=$(jget lease_secret)
acquire "d:rel" a 60000
t_rel=$(jget token)
release "d:rel" "$t_rel" "$(jget lease_secret)"
expect_code 204 "release d:rel"
acquire "d:exp" a 100
t_exp=$(jget token)
wait_gone "d:exp"
acquire "d:top" a 1000
top=$(jget token)

# after_restart WHAT: the state above survived.
after_restart() {
    get_lease "d:live"
    expect_code 200 "$1: d:live still held"
    expect_field token "$t_live" "$1: d:live token"
    expect_field owner_id a "$1: d:live owner"
    acquire "d:live" b 1000
    expect_error 409 held "$1: d:live for another owner"
    [ "$(jget holder.token)" = "$t_live" ] || fail "$1: holder: $BODY"
    acquire "d:live" a 60000 '"request_id":"rq-1"'
    expect_code 200 "$1: request_id retry of d:live"
    expect_field token "$t_live" "$1: retry token"
    expect_field lease_secret "$s_live" "$1: retry secret"
    renew "d:live" "$t_live" "$s_live" 60000
    expect_code 200 "$1: renew d:live by its holder"
    expect_field token "$t_live" "$1: renewed token"
    for n in "d:rel:$t_rel" "d:exp:$t_exp"; do
        check_token "${n%:*}" "${n##*:}"
        expect_code 200 "$1: check ${n%:*}"
        expect_field floor "${n##*:}" "$1: floor of ${n%:*} kept"
        expect_field current false "$1: ${n%:*} not current"
        get_lease "${n%:*}"
        expect_error 404 not_found "$1: ${n%:*} stays ended"
    done
    acquire "d:new:$1" c 1000
    expect_code 201 "$1: acquire after restart"
    local t
    t=$(jget token)
    [ "$t" -gt "$top" ] || fail "$1: token $t after restart is not above $top"
    top=$t
}

# --- SIGTERM: a clean stop
kill -TERM "$SERVER_PID"
(sleep 5 && kill -9 "$SERVER_PID" 2>/dev/null) &
watchdog=$!
st=0
wait "$SERVER_PID" || st=$?
kill "$watchdog" 2>/dev/null || true
wait "$watchdog" 2>/dev/null || true
[ "$st" != 137 ] || fail "tenured still running 5 s after SIGTERM"
[ "$st" = 0 ] || fail "tenured exited with status $st after SIGTERM"
tn_start_server
after_restart sigterm
pass "SIGTERM restart: exit 0, tokens increase, leases, floors, request_id and renew kept"

# --- kill -9, several times in a row
for i in 1 2 3; do
    tn_restart_server KILL
    after_restart "kill$i"
done
pass "kill -9 restarts (x3): tokens increase, leases, floors, request_id and renew kept"

# --- a lease live at kill -9 stays held for its full TTL from the restart
acquire "d:k1" a 1500
expect_code 201 "acquire d:k1"
t_k1=$(jget token)
s_k1=$(jget lease_secret)
acquire "d:k2" a 1500
expect_code 201 "acquire d:k2"
t_k2=$(jget token)
[ "$t_k2" -gt "$top" ] || fail "d:k2 token"
top=$t_k2
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
restart=$(now_ms)
tn_start_server
# The holder may renew (no newer token exists).
renew "d:k1" "$t_k1" "$s_k1" 1500
expect_code 200 "holder renews d:k1 after the restart"
expect_field token "$t_k1"
# Nobody else gets d:k2 before 1500 ms have passed since the restart.
granted_at=""
while [ "$(($(now_ms) - restart))" -lt 4000 ]; do
    acquire "d:k2" b 1000
    ack=$(now_ms)
    if [ "$CODE" = 201 ]; then granted_at=$ack; break; fi
    expect_error 409 held "d:k2 for another owner"
    [ "$(jget holder.token)" = "$t_k2" ] || fail "d:k2 holder: $BODY"
    he=$(jget holder.expires_in_ms)
    [ $((ack + he)) -ge $((restart + 1500 - 2)) ] ||
        fail "d:k2 would end ${he} ms after $((ack - restart)) ms, before 1500 ms since the restart"
    sleep 0.05
done
[ -n "$granted_at" ] || fail "d:k2 never became free again (4 s after the restart)"
[ $((granted_at - restart)) -ge 1500 ] ||
    fail "d:k2 granted to another owner $((granted_at - restart)) ms after the restart (ttl 1500)"
[ "$(jget token)" -gt "$top" ] || fail "token of the re-grant not above $top"
pass "lease live at kill -9: held for its full TTL after the restart ($((granted_at - restart)) ms), renewable by its holder"
