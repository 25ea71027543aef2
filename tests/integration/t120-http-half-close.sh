#!/usr/bin/env bash
# Half-closed connections (issue #36, 2026-12-07): a client that sends one request and
# then shuts down its sending side (shutdown(SHUT_WR), as `nc -N` does)
# gets the answer that request earned, then the close (RFC 9112 §9.6).
# 200 connections of each kind: Connection: close, HTTP/1.0, a malformed
# request (400), an acquire parked for its commit, and 200 blocking
# acquires parked on held names (each sent an interim 100 Continue, which
# clients skip, and granted when the names are released).  Before the fix
# 2 to 158 in 200 were answered, and the waiters got 503 at once.
# t116 checks the other side: waiters whose clients really left are still
# cancelled at once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-http.sh"

EDGE="$TN_SRC/tests/tools/http/edge.py"
N=200
tn_start_server

for kind in close http10 bad commit; do
    out=$(python3 "$EDGE" halfclose "$PORT" "$kind" "$N") ||
        fail "edge.py halfclose $kind: $out"
    echo "$kind: $out"
    want=200
    [ "$kind" = bad ] && want=400
    [ "$kind" = commit ] && want=201
    case $out in
    "answered=$N statuses=$want:$N interim=0 closed=$N") ;;
    *) fail "half-closed $kind requests: expected $N answers $want, then the close; got $out" ;;
    esac
done
pass "$N half-closed requests of each kind answered, then closed"

out=$(python3 "$EDGE" halfclose "$PORT" waiting "$N" --name hc:wait) ||
    fail "edge.py halfclose waiting: $out"
echo "waiting: $out"
case $out in
"answered=$N statuses=201:$N interim=$N closed=$N early=0") ;;
*) fail "half-closed waiters: expected each to get a 100 Continue, then 201 once its name was released; got $out" ;;
esac
[ "$(metric tenure_http_parked_disconnects_total)" = 0 ] ||
    fail "a half-closed waiter was taken for a client that left"
pass "$N half-closed waiters kept their place and were granted"

# HTTP/1.0 cannot be sent an interim answer: a half-closed HTTP/1.0
# waiter counts as gone, and is told so in the documented error shape.
acquire hc:w10 holder 600000
expect_code 201 "holding hc:w10"
out=$(python3 "$EDGE" halfclose "$PORT" waiting10 20 --name hc:w10) ||
    fail "edge.py halfclose waiting10: $out"
echo "waiting10: $out"
[ "$out" = "answered=20 statuses=400:20 interim=0 closed=20" ] ||
    fail "half-closed HTTP/1.0 waiters: expected 400 each, then the close; got $out"
tn_wait_metric tenure_waiters 0 "no waiter left behind"
pass "half-closed HTTP/1.0 waiters: 400, not kept"
