#!/usr/bin/env bash
# Browsers (issue #36, 2026-12-07, docs/SECURITY.md "Browsers").  With auth off (the
# default on loopback) a web page elsewhere acquired, renewed and released
# leases through a browser on the server's machine (fetch with mode
# 'no-cors' sends a JSON body as application/x-www-form-urlencoded, and a
# sandboxed page sends Origin: null), and a request naming another Host
# was served, which lets a DNS rebinding page read everything.  Now: a
# state-changing request whose Origin is not the server's own (or listed
# with --allow-origin) is 403 forbidden, before its body is read, and
# changes nothing; while auth is off, a Host that is not a loopback name,
# an IP address, the listen host or --allow-host is 421
# misdirected_request.  Requests without Origin (curl -d, the clients)
# and without Host (HTTP/1.0) are served; the console's own requests
# (Origin and Host of the server itself) too.  With --auth-file or mutual
# TLS the Origin rule still applies (browsers send client certificates by
# themselves), the Host rule does not.  tests/ui drives a real chromium.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-http.sh"
. "$(dirname "$0")/lib-security.sh"
need_tools
tn_start_server
SELF="http://127.0.0.1:$PORT"
FORM=application/x-www-form-urlencoded
body() { printf '{"name":"%s","owner_id":"web","ttl_ms":60000}' "$1"; }
expect_absent() {
    get_lease "$1"
    [ "$CODE" = 404 ] || fail "$2: lease $1 exists ($CODE $BODY)"
}

# --- curl -d without an Origin: served, as the README tour does.
rq POST /v1/leases "$FORM" "$(body web:curl)"
expect_code 201 "curl -d without Origin"
tok=$(jget token)
sec=$(jget lease_secret)
pass "curl -d (form type, no Origin): 201"

# --- what a page elsewhere sends: fetch(mode:'no-cors') of a JSON body
# as a form, a sandboxed or file: page (Origin: null), another port of
# this host, https for http.
for o in "http://evil.example" "null" "http://127.0.0.1:1" "https://127.0.0.1:$PORT" \
    "http://localhost.evil.example:$PORT"; do
    rq POST /v1/leases "$FORM" "$(body "web:x")" -H "Origin: $o"
    expect_error 403 forbidden "acquire from Origin $o"
    expect_absent web:x "acquire from Origin $o"
    rq PATCH "/v1/leases/web%3Acurl" "$FORM" "{\"token\":$tok,\"lease_secret\":\"$sec\",\"ttl_ms\":100}" -H "Origin: $o"
    expect_error 403 forbidden "renew from Origin $o"
    rq DELETE "/v1/leases/web%3Acurl" "$FORM" "{\"token\":$tok,\"lease_secret\":\"$sec\"}" -H "Origin: $o"
    expect_error 403 forbidden "release from Origin $o"
    rq DELETE "/v1/leases/web%3Acurl?force=true" - "" -H "Origin: $o"
    expect_error 403 forbidden "force release from Origin $o"
done
get_lease web:curl
expect_code 200 "web:curl after the refused renews and releases"
[ "$(jget token)" = "$tok" ] || fail "web:curl changed hands: $BODY"
[ "$(jget expires_in_ms)" -gt 50000 ] || fail "a refused renew shortened web:curl: $BODY"
# Reading is not refused (the page cannot read a cross-origin answer).
rq GET /v1/leases - "" -H "Origin: http://evil.example"
expect_code 200 "a list with a foreign Origin"
pass "state changes from foreign origins and Origin: null: 403, nothing changed"

# --- the console's own requests: Origin and Host are the server's.
rq POST /v1/leases application/json "$(body web:ui)" -H "Origin: $SELF"
expect_code 201 "acquire from the server's own origin"
rq DELETE "/v1/leases/web%3Aui?force=true" - "" -H "Origin: $SELF"
expect_code 204 "force release from the server's own origin (the console)"
rq POST /v1/leases application/json "$(body web:ui2)" -H "Origin: http://localhost:$PORT" \
    -H "Host: localhost:$PORT"
expect_code 201 "acquire from http://localhost:$PORT"
pass "the server's own origin: served"

# --- DNS rebinding: a Host that names no name of this server.
for h in "evil.example" "evil.example:$PORT" "127.0.0.1.evil.example"; do
    rq GET /v1/leases - "" -H "Host: $h"
    expect_error 421 misdirected_request "a list with Host $h"
    rq GET /v1/leases/web%3Acurl - "" -H "Host: $h"
    expect_error 421 misdirected_request "a read with Host $h"
    rq POST /v1/leases application/json "$(body web:rebind)" -H "Host: $h" \
        -H "Origin: http://$h"
    expect_error 421 misdirected_request "an acquire with Host $h and its Origin"
done
expect_absent web:rebind "acquire through a rebound name"
for h in "localhost" "localhost:$PORT" "127.0.0.1" "[::1]:$PORT" "10.9.8.7:80"; do
    rq GET /healthz - "" -H "Host: $h"
    expect_code 200 "Host $h"
done
printf 'GET /healthz HTTP/1.0\r\n\r\n' >"$T/h10.req"
http_exchange "$T/h10.req"
expect_code 200 "HTTP/1.0 without Host"
# One keep-alive connection: the server keeps the answer of the Host
# check for the connection's last Host; a different Host of the same
# length after two good ones is still checked.
bad=$(printf 'x%.0s' $(seq 1 9)):$PORT
{
    printf 'GET /healthz HTTP/1.1\r\nHost: localhost:%s\r\n\r\n' "$PORT"
    printf 'GET /healthz HTTP/1.1\r\nHost: localhost:%s\r\n\r\n' "$PORT"
    printf 'GET /healthz HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$bad"
} >"$T/keep.req"
http_exchange "$T/keep.req" 3
[ "$(grep -o '^response status=[0-9]*' "$T/ex.out" | tr '\n' ' ')" = \
    "response status=200 response status=200 response status=421 " ] ||
    fail "a foreign Host after good ones on one connection: $EX"
[ "$(metric tenure_http_cross_site_refused_total)" -ge 30 ] ||
    fail "tenure_http_cross_site_refused_total: $(metric tenure_http_cross_site_refused_total)"
pass "foreign Host names: 421; loopback names, IP addresses and no Host: served"
tn_kill_server

# --- names and origins allowed by the operator (repeatable, comma lists).
PORT=""
tn_start_server --allow-host tenure.test,lb.test --allow-host other.test \
    --allow-origin http://app.test:8080
for h in tenure.test lb.test:443 other.test; do
    rq GET /healthz - "" -H "Host: $h"
    expect_code 200 "--allow-host: Host $h"
done
rq GET /healthz - "" -H "Host: evil.example"
expect_error 421 misdirected_request "Host evil.example with --allow-host others"
rq POST /v1/leases "$FORM" "$(body web:app)" -H "Origin: http://app.test:8080"
expect_code 201 "--allow-origin http://app.test:8080"
rq POST /v1/leases "$FORM" "$(body web:app2)" -H "Origin: http://app.test:8081"
expect_error 403 forbidden "an origin that is not listed"
rq POST /v1/leases "$FORM" "$(body web:own)" -H "Origin: http://tenure.test" -H "Host: tenure.test"
expect_code 201 "the origin of an allowed host"
pass "--allow-host and --allow-origin"
tn_kill_server

# --- auth on (bearer tokens): the Host is free, the Origin rule stays.
sec_write_auth "$T/auth.json"
PORT=""
tn_start_server --auth-file "$T/auth.json"
rq GET /v1/leases/shard%3A1 - "" -H "Host: tenure.internal.example" -H "Authorization: Bearer $TOK_INDEXER"
expect_error 404 not_found "a read by name with auth on"
rq POST /v1/leases "$FORM" "$(body shard:1)" -H "Authorization: Bearer $TOK_INDEXER"
expect_code 201 "an acquire with a token and no Origin"
rq POST /v1/leases "$FORM" "$(body shard:2)" -H "Authorization: Bearer $TOK_INDEXER" \
    -H "Origin: http://evil.example"
expect_error 403 forbidden "an acquire with a token from a foreign origin"
expect_absent_auth() {
    rq GET "/v1/leases/$(enc "$1")" - "" -H "Authorization: Bearer $TOK_INDEXER"
    [ "$CODE" = 404 ] || fail "$2: lease $1 exists ($CODE $BODY)"
}
expect_absent_auth shard:2 "acquire with a token from a foreign origin"
pass "auth on: any Host name, foreign Origins still 403"
