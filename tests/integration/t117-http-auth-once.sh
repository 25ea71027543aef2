#!/usr/bin/env bash
# Authentication runs once per request: a request with a body is
# authenticated when its headers are complete (before "100 Continue"), and
# that decision holds for the body that follows, even when the auth file
# is reloaded in between and no longer knows the token (a request in
# flight keeps the table it started with).  Authenticating again once the
# body is whole would answer 401 here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-security.sh"
sec_need_auth_flag
need_tools
sec_write_auth "$T/auth.json"
tn_start_server --auth-file "$T/auth.json"

body='{"name":"shard:once","owner_id":"o","ttl_ms":60000}'
exec {FD}<>"/dev/tcp/127.0.0.1/$PORT" || fail "connect to $PORT"
printf 'POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n' \
    "$TOK_INDEXER" "${#body}" >&"$FD"
IFS= read -r -t 10 line <&"$FD" || fail "no interim answer to the headers"
[[ $line == "HTTP/1.1 100 "* ]] || fail "headers answered '$line', not 100 Continue"
IFS= read -r -t 10 line <&"$FD" || fail "100 Continue not ended"
pass "the headers were accepted (100 Continue)"

# indexer's token is replaced while the body is still to come.
OLD_INDEXER=$TOK_INDEXER
TOK_INDEXER=$(sec_new_token)
sec_write_auth "$T/auth.json"
kill -HUP "$SERVER_PID"
for i in $(seq 1 100); do
    as_get "$OLD_INDEXER" "shard:once"
    [ "$CODE" = 401 ] && break
    [ "$i" = 100 ] && fail "old token still accepted 5 s after SIGHUP: $CODE $BODY"
    sleep 0.05
done
pass "the reload took effect: the old token is refused"

printf '%s' "$body" >&"$FD"
IFS= read -r -t 10 line <&"$FD" || fail "no answer once the body was sent"
code=$(printf '%s' "$line" | cut -d' ' -f2)
len=0
while IFS= read -r -t 10 line <&"$FD"; do
    line=${line%$'\r'}
    [ -z "$line" ] && break
    case ${line,,} in content-length:*) len=${line#*: } ;; esac
done
resp=""
[ "$len" -gt 0 ] && IFS= read -r -t 10 -N "$len" resp <&"$FD"
exec {FD}>&-
[ "$code" = 201 ] ||
    fail "the body of a request authenticated at its headers got $code: $resp"
as_get "$TOK_INDEXER" "shard:once"
expect_code 200 "the lease acquired by the request in flight"
pass "authenticated once, at the headers: the request in flight was served"
