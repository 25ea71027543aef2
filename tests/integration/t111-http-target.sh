#!/usr/bin/env bash
# The request target is taken whole or refused, never cut short: a query
# value over its cap is answered 414 (or 400) in the documented error
# shape, never as if the parameter were absent (a list of every lease); a
# raw NUL or control byte in the path is answered 400, never acted on as
# the name before it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-http.sh"
need_tools
tn_start_server

for n in a b c; do
    acquire "$n" o 600000
    expect_code 201 "acquire $n"
done
acquire "q:one" o 600000
expect_code 201 "acquire q:one"

# --- a query value over its cap.  8400 bytes of prefix: no lease has
# such a prefix, so the only correct lists are empty ones; a server that
# dropped the value lists all four leases.
long=$(head -c 8400 /dev/zero | tr '\0' 'q')
printf 'GET /v1/leases?prefix=%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' "$long" >"$T/long.req"
http_exchange "$T/long.req"
echo "GET /v1/leases?prefix=<8400 bytes>: $(cut -c1-200 <<<"$EX")"
[ "$EX_N" -ge 1 ] || fail "prefix of 8400 bytes: no answer: $EX"
case $BODY in *'"leases"'*) fail "prefix of 8400 bytes: answered with a list (the value was dropped): $BODY" ;; esac
case $CODE in
414 | 400) expect_error_shape "$CODE" "prefix of 8400 bytes" ;;
*) fail "prefix of 8400 bytes: expected 414 or 400, got $CODE: $BODY" ;;
esac
pass "a query value over its cap: $CODE in the error shape, no list"

# The same through curl, as a user would send it (percent-encoded).
rj GET "/v1/leases?prefix=$long"
case $BODY in *'"leases"'*) fail "curl, prefix of 8400 bytes: answered with a list: $BODY" ;; esac
case $CODE in
414 | 400) expect_error_shape "$CODE" "curl, prefix of 8400 bytes" ;;
*) fail "curl, prefix of 8400 bytes: expected 414 or 400, got $CODE: $BODY" ;;
esac
pass "the same through curl: $CODE"

# --- NUL and control bytes in the path.  "a" is a live lease: a server
# that cut the name at the byte would answer for "a" (GET 200) or release
# it (DELETE with a's token and secret).
for byte in '\x00' '\x01' '\x7f' '\x0b'; do
    printf "GET /v1/leases/a${byte}b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" >"$T/ctl.req"
    http_exchange "$T/ctl.req" 3
    echo "GET /v1/leases/a${byte}b: $EX"
    [ "$EX_N" -ge 1 ] || fail "GET /v1/leases/a${byte}b: no answer: $EX"
    [ "$CODE" != 200 ] || fail "GET /v1/leases/a${byte}b answered for lease a: $BODY"
    expect_error_shape 400 "GET /v1/leases/a${byte}b"
done
pass "NUL and control bytes in a GET path: 400"

# DELETE /v1/leases/a\0b with a's real token and secret must not release a.
acquire "victim" o 600000
expect_code 201 "acquire victim"
vt=$(jget token)
vs=$(jget lease_secret)
body="{\"token\":$vt,\"lease_secret\":\"$vs\"}"
printf 'DELETE /v1/leases/victim\x00x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
    "${#body}" "$body" >"$T/del.req"
http_exchange "$T/del.req" 3
echo "DELETE /v1/leases/victim\\0x: $EX"
get_lease victim
[ "$CODE" = 200 ] || fail "DELETE /v1/leases/victim\\0x released lease victim (GET victim: $CODE)"
expect_field token "$vt" "victim after the NUL delete"
http_exchange_parse
[ "$EX_N" -ge 1 ] || fail "DELETE with a NUL in the path: no answer: $EX"
expect_error_shape 400 "DELETE /v1/leases/victim\\0x"
pass "a NUL in a DELETE path: 400, the lease before the NUL untouched"

# The server is still fine.
acquire "after:target" o 1000
expect_code 201 "acquire after the target attacks"
pass "normal service afterwards"
