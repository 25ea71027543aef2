#!/usr/bin/env bash
# Request framing in doubt (request smuggling): two differing
# Content-Length headers, Content-Length together with Transfer-Encoding:
# chunked, a transfer coding other than chunked, and whitespace between a
# header field name and its colon; a request line of another HTTP version
# than 1.0 and 1.1.  Each is answered with the documented error shape
# (400, 501 for the unknown coding, 505 for the version) at once,
# the connection is closed after that one answer, and nothing the request
# or its trailing bytes asked for happens: no lease is created.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-http.sh"
need_tools
tn_start_server

# acq_body NAME: the JSON of an acquire of NAME.
acq_body() { printf '{"name":"%s","owner_id":"smuggler","ttl_ms":60000}' "$1"; }
# acq_req NAME: a complete, well-formed acquire request of NAME.
acq_req() {
    local b
    b=$(acq_body "$1")
    printf 'POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
        "${#b}" "$b"
}
# expect_absent NAME WHAT: no lease NAME exists.
expect_absent() {
    get_lease "$1"
    [ "$CODE" = 404 ] || fail "$2: lease $1 exists ($CODE $BODY)"
}

# --- two differing Content-Length headers, in both orders: the shorter
# one covers the first acquire only, the longer one also the smuggled
# request behind it.  Whichever a server took, one of the two orders
# would run the smuggled acquire as a second request.
first=$(acq_body "cl:first")
smuggled=$(acq_req "cl:smuggled")
short=${#first}
long=$((${#first} + ${#smuggled}))
for order in "$short $long" "$long $short"; do
    read -r a b <<<"$order"
    printf 'POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\nContent-Length: %d\r\n\r\n%s%s' \
        "$a" "$b" "$first" "$smuggled" >"$T/cl2.req"
    http_exchange "$T/cl2.req"
    echo "Content-Length $a then $b:"
    sed 's/^/    /' <<<"$EX"
    expect_absent "cl:smuggled" "Content-Length $a then $b: the trailing bytes ran as a second request (smuggling)"
    expect_absent "cl:first" "Content-Length $a then $b: the request was acted on"
    http_exchange_parse # CODE and BODY of the exchange again
    expect_error_shape 400 "Content-Length $a then $b"
    expect_one_answer_then_close "Content-Length $a then $b"
done
# The same value twice is a duplicate too: RFC 9112 (6.3) lets a server
# reject it, and tenured rejects every repeated Content-Length.
printf 'POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\nContent-Length: %d\r\n\r\n%s' \
    "$short" "$short" "$first" >"$T/cl-dup.req"
http_exchange "$T/cl-dup.req"
echo "Content-Length twice, same value:"
sed 's/^/    /' <<<"$EX"
expect_absent "cl:first" "duplicate Content-Length: the request was acted on"
http_exchange_parse
expect_error_shape 400 "duplicate Content-Length"
expect_one_answer_then_close "duplicate Content-Length"
pass "two Content-Length headers: 400, connection closed, nothing smuggled or created"

# --- Content-Length together with Transfer-Encoding: chunked.  The chunked
# body is one acquire; the Content-Length covers only part of it, so a
# server that framed by Content-Length would read the rest as a request.
body=$(acq_body "te:chunked")
tail_req=$(acq_req "te:smuggled")
printf -v chunked '%x\r\n%s\r\n0\r\n\r\n' "${#body}" "$body"
printf 'POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%s%s' \
    "${#chunked}" "$chunked" "$tail_req" >"$T/clte.req"
http_exchange "$T/clte.req"
echo "Content-Length with Transfer-Encoding: chunked:"
sed 's/^/    /' <<<"$EX"
expect_absent "te:chunked" "CL + TE: the request was acted on"
expect_absent "te:smuggled" "CL + TE: trailing bytes ran as a request"
http_exchange_parse
expect_error_shape 400 "Content-Length with Transfer-Encoding: chunked"
expect_one_answer_then_close "Content-Length with Transfer-Encoding: chunked"
pass "Content-Length with Transfer-Encoding: chunked: 400, connection closed"

# --- a transfer coding tenured does not implement: 501 at once (the
# request timeout is the default 30 s, so an answer within the 10 s this
# waits is not the timeout), and the connection closed: the server cannot
# know where the body ends.
printf 'POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\n\r\n%s' \
    "$(acq_body "te:gzip")" >"$T/gzip.req"
http_exchange "$T/gzip.req" 10
echo "Transfer-Encoding: gzip:"
sed 's/^/    /' <<<"$EX"
[ "$EX_N" -ge 1 ] || fail "Transfer-Encoding: gzip: no answer within 10 s (the request timeout is 30 s):
$EX"
expect_error_shape 501 "Transfer-Encoding: gzip"
expect_one_answer_then_close "Transfer-Encoding: gzip"
expect_absent "te:gzip" "Transfer-Encoding: gzip: the request was acted on"
echo "Transfer-Encoding: gzip answered after ${EX_FIRST_MS} ms"
pass "Transfer-Encoding: gzip: 501 at once, connection closed"

# --- whitespace between a header field name and its colon (RFC 9112 5.1):
# "Content-Length : N" is not Content-Length to a proxy that reads names
# strictly, which would frame the body differently.  Refused, not read.
printf 'POST /v1/leases HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length : %d\r\n\r\n%s%s' \
    "${#first}" "$first" "$smuggled" >"$T/ws.req"
http_exchange "$T/ws.req"
echo "Content-Length with a space before the colon:"
sed 's/^/    /' <<<"$EX"
expect_absent "cl:first" "space before the colon: the request was acted on"
expect_absent "cl:smuggled" "space before the colon: trailing bytes ran as a request"
http_exchange_parse
expect_error_shape 400 "space before the colon"
expect_one_answer_then_close "space before the colon"
pass "whitespace before a header's colon: 400, connection closed"

# --- an HTTP version other than 1.0 and 1.1: 505, the connection closed
# (a request line of another major version is not read as HTTP/1.1).
for v in 2.0 3.0 0.9; do
    b=$(acq_body "ver:$v")
    printf 'POST /v1/leases HTTP/%s\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s' \
        "$v" "${#b}" "$b" >"$T/ver.req"
    http_exchange "$T/ver.req"
    expect_absent "ver:$v" "HTTP/$v: the request was acted on"
    http_exchange_parse
    expect_error_shape 505 "HTTP/$v"
    [ "$(jget error)" = http_version_not_supported ] || fail "HTTP/$v: error $(jget error)"
    expect_one_answer_then_close "HTTP/$v"
done
pass "HTTP/2.0, 3.0 and 0.9 request lines: 505, connection closed"

# The server is still fine.
acquire "after:framing" o 1000
expect_code 201 "acquire after the framing attacks"
pass "normal service afterwards"
