#!/usr/bin/env bash
# A session's requests through the client's list of URLs, where the first
# URL is a relay that passes each request on and then loses its answer
# (503 after the server did it, tests/tools/ha/lost_reply_proxy.py): the
# client sends it again to the next URL, which must be safe.
# 1. A claim answered 503 was done; sent again (to the relay, which does it
#    again, then to the server) it comes back with the grants the first
#    attempt made: the same tokens as the live leases, one grant per name
#    in the history (a name the session already holds answers the same
#    grant).
# 2. A session renew is done twice, harmlessly.
# 3. A batch release whose first attempt released the leases: the retry
#    reads them lost, and they are free.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
PY=${TN_PYTHON3:-/usr/bin/python3}
tn_start_server
need_sessions
port=$(tn_free_port)
"$PY" "$TN_SRC/tests/tools/ha/lost_reply_proxy.py" --mode 503 \
    --pidfile "$T/relay.pid" "$port" "$PORT" >>"$T/relay.log" 2>&1 &
TN_CLIENT_PIDS+=($!)
for _ in $(seq 1 200); do [ -s "$T/relay.pid" ] && break; sleep 0.05; done
[ -s "$T/relay.pid" ] || fail "relay did not start"
RELAY="http://127.0.0.1:$port"

BODY=$("$TENURE" --server "$URL" --json session open --ttl 30s --owner fo/w1) ||
    fail "session open: $BODY"
sid=$(jget session_id)
sec=$(jget session_secret)

# 1. Through the relay alone, the claim is done but its answer is a 503.
expect_exit 1 "a claim answered 503" "$TENURE" --server "$RELAY" claim \
    --session "$sid" --secret "$sec" fo:a fo:b fo:c
grep -q 'unavailable' "$T/err" || fail "expected the relay's 503: $(cat "$T/err")"
req GET "/v1/sessions/$sid"
expect_field leases 3 "the claim answered 503 was done"
# With the server behind it, the client sends it again there.
"$TENURE" --server "$RELAY,$URL" --json claim --session "$sid" --secret "$sec" \
    fo:a fo:b fo:c >"$T/claim" 2>"$T/claim.err" ||
    fail "claim through the relay: exit $?: $(cat "$T/claim" "$T/claim.err")"
for n in fo:a fo:b fo:c; do
    line=$(grep "\"name\":\"$n\"" "$T/claim") || fail "no answer for $n: $(cat "$T/claim")"
    BODY=$line
    expect_field status granted "$n after the retry"
    tok=$(jget token)
    BODY=$("$TENURE" --server "$URL" --json get "$n") || fail "get $n"
    expect_field token "$tok" "the grant the client got is the live one ($n)"
    req GET "/v1/leases/$n/history"
    if [ "$CODE" = 200 ]; then
        grants=$(printf '%s' "$BODY" | grep -o '"token":' | wc -l)
        [ "$grants" = 1 ] || fail "$n was granted $grants times: $BODY"
    fi
done
req GET "/v1/sessions/$sid"
expect_field leases 3 "the session's leases after the retried claim"

# 2. The renew's answer is lost: renewed again on the next URL.
"$TENURE" --server "$RELAY,$URL" session renew "$sid" --secret "$sec" >"$T/renew" 2>&1 ||
    fail "session renew through the relay: $(cat "$T/renew")"

# 3. The batch release's answer is lost: the retry finds them gone.
ta=$(grep '"fo:a"' "$T/claim" | sed 's/.*"token":\([0-9]*\).*/\1/')
tb=$(grep '"fo:b"' "$T/claim" | sed 's/.*"token":\([0-9]*\).*/\1/')
rc=0
"$TENURE" --server "$RELAY,$URL" release --session "$sid" --secret "$sec" \
    "fo:a=$ta" "fo:b=$tb" >"$T/rel" 2>&1 || rc=$?
[ "$rc" = 4 ] || fail "release retried after its commit: expected exit 4 (lost), got $rc: $(cat "$T/rel")"
grep -q "^lost fo:a token=$ta" "$T/rel" || fail "fo:a: $(cat "$T/rel")"
expect_exit 5 "fo:a is free" "$TENURE" --server "$URL" get fo:a
expect_exit 5 "fo:b is free" "$TENURE" --server "$URL" get fo:b
expect_exit 0 "fo:c is still held" "$TENURE" --server "$URL" get fo:c
"$TENURE" --server "$URL" session end "$sid" --secret "$sec" >/dev/null || fail "session end"
pass "through a relay that loses answers: the claim got the grants made (one each), the renew and the release were safe to repeat"
