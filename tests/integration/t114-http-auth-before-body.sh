#!/usr/bin/env bash
# With --auth-file, a request is authenticated as soon as its headers are
# complete: one without a bearer token, with an unknown one, or with one
# whose principal may not touch the name in the path is answered 401 or
# 403 before any of its body is sent (so slow bodies need credentials).
# The request timeout is the default 30 s, so an answer within the 5 s this
# waits cannot be the timeout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-security.sh"
. "$(dirname "$0")/lib-http.sh"
sec_need_auth_flag
need_tools
sec_write_auth "$T/auth.json"
tn_start_server --auth-file "$T/auth.json"

# head METHOD PATH TOKEN: the head of a JSON request announcing a
# 200-byte body ("-": no Authorization header).
head_only() {
    local auth=""
    [ "$3" = - ] || auth="Authorization: Bearer $3"$'\r\n'
    printf '%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Type: application/json\r\nContent-Length: 200\r\n\r\n' \
        "$1" "$2" "$auth" >"$T/head.req"
}

head_only POST /v1/leases -
http_headers_only "$T/head.req"
echo "POST, no token, head only: $EX"
[ "$EX_N" -ge 1 ] || fail "POST without a token: no answer before the body was sent: $EX"
expect_unauth "POST without a token, head only"

head_only POST /v1/leases "not-a-principal-$(sec_new_token)"
http_headers_only "$T/head.req"
echo "POST, unknown token, head only: $EX"
[ "$EX_N" -ge 1 ] || fail "POST with an unknown token: no answer before the body was sent: $EX"
expect_unauth "POST with an unknown token, head only"

head_only PATCH "/v1/leases/$(enc cfg/x)" "$TOK_INDEXER"
http_headers_only "$T/head.req"
echo "PATCH cfg/x as indexer (rights on shard: only), head only: $EX"
[ "$EX_N" -ge 1 ] || fail "PATCH outside the principal's prefixes: no answer before the body was sent: $EX"
expect_forbidden "PATCH outside the principal's prefixes, head only"

head_only DELETE "/v1/leases/$(enc shard:1)" "$TOK_READER"
http_headers_only "$T/head.req"
echo "DELETE shard:1 as reader (read only), head only: $EX"
[ "$EX_N" -ge 1 ] || fail "DELETE by a read-only principal: no answer before the body was sent: $EX"
expect_forbidden "DELETE by a read-only principal, head only"
pass "401/403 decided on the headers, before any body was sent"

# The control: a permitted request is not answered before its body.
head_only POST /v1/leases "$TOK_INDEXER"
http_headers_only "$T/head.req" 2
echo "POST as indexer, head only: $EX"
[ "$EX_N" = 0 ] || fail "a permitted acquire was answered before its body arrived: $EX"
as_acquire "$TOK_INDEXER" "shard:1" o 60000
expect_code 201 "a permitted acquire with its body"
pass "a permitted request still waits for its body, and is then served"
