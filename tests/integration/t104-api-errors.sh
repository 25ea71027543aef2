#!/usr/bin/env bash
# Every error case of CONTRACT §3 Errors on the lease API: malformed JSON,
# duplicate keys, trailing garbage, wrong types, missing fields, ttl out of
# range, over-long and non-printable names and owners, invalid UTF-8, body
# over 4 KiB (413), headers over 8 KiB (431), text/plain (415).  Each answer
# is {"error","message"}, and no rejected request changes state: no lease is
# created or extended, no floor moves, no token is consumed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools
tn_start_server

# A live lease the bad requests aim at, and the token sequence before them.
live_at=$(now_ms)
acquire "e:live" keeper 600000
expect_code 201 "acquire e:live"
ltok=$(jget token)
lsec=$(jget lease_secret)
acquire "e:step" keeper 600000
expect_code 201 "acquire e:step"
step_tok=$(jget token)
# Tokens are consecutive here iff a second grant right after is +1.
acquire "e:step2" keeper 600000
last_tok=$(jget token)
consecutive=0
[ "$last_tok" = $((step_tok + 1)) ] && consecutive=1

bad_acquire() { # WHAT BODY [CONTENT_TYPE]
    rq POST /v1/leases "${3:-application/json}" "$2"
    expect_error 400 bad_request "$1"
}

n257=$(printf 'n%.0s' $(seq 1 257))
o129=$(printf 'o%.0s' $(seq 1 129))
ok='"owner_id":"o","ttl_ms":1000'

# --- malformed, duplicate keys, trailing garbage, not an object
bad_acquire "malformed JSON" '{"name":"e:1",'
bad_acquire "not JSON" 'name=e:1&owner_id=o&ttl_ms=1000'
bad_acquire "unterminated string" '{"name":"e:1}'
bad_acquire "single quotes" "{'name':'e:1','owner_id':'o','ttl_ms':1000}"
bad_acquire "duplicate key name" "{\"name\":\"e:1\",$ok,\"name\":\"e:2\"}"
bad_acquire "duplicate key ttl_ms" "{\"name\":\"e:1\",$ok,\"ttl_ms\":2000}"
bad_acquire "trailing garbage" "{\"name\":\"e:1\",$ok} x"
bad_acquire "trailing second object" "{\"name\":\"e:1\",$ok}{}"
bad_acquire "JSON array" "[{\"name\":\"e:1\",$ok}]"
bad_acquire "JSON string" '"e:1"'
bad_acquire "JSON number" '42'
bad_acquire "JSON null" 'null'
bad_acquire "empty body" ''
bad_acquire "empty object" '{}'
bad_acquire "malformed, no Content-Type" '{"name":' -
bad_acquire "duplicate key in a nested object" "{\"name\":\"e:1\",$ok,\"x\":{\"a\":1,\"a\":2}}"
bad_acquire "unterminated string after the object" "{\"name\":\"e:1\",$ok}\"x"
bad_acquire "escaped NUL in an unknown field" "{\"name\":\"e:1\",$ok,\"x\":\"a\\u0000b\"}"
bad_acquire "unpaired surrogate escape" "{\"name\":\"e:1\\ud800\",$ok}"
bad_acquire "high surrogate before a letter" "{\"name\":\"e:\\ud800\\u0041\",$ok}"
bad_acquire "form feed between tokens" "$(printf '{"name":"e:1",\f%s}' "$ok")"
deep="{\"name\":\"e:1\",$ok,\"x\":$(printf '[%.0s' $(seq 1 40))$(printf ']%.0s' $(seq 1 40))}"
bad_acquire "nested 41 levels deep" "$deep"
pass "malformed JSON, duplicate keys, trailing garbage, non-objects: 400"

# --- wrong types
bad_acquire "ttl_ms as string" '{"name":"e:1","owner_id":"o","ttl_ms":"1000"}'
bad_acquire "ttl_ms as float" '{"name":"e:1","owner_id":"o","ttl_ms":1000.5}'
bad_acquire "ttl_ms as 1000.0" '{"name":"e:1","owner_id":"o","ttl_ms":1000.0}'
bad_acquire "ttl_ms as 1e3" '{"name":"e:1","owner_id":"o","ttl_ms":1e3}'
bad_acquire "ttl_ms as bool" '{"name":"e:1","owner_id":"o","ttl_ms":true}'
bad_acquire "ttl_ms huge" '{"name":"e:1","owner_id":"o","ttl_ms":99999999999999999999999}'
bad_acquire "name as number" "{\"name\":5,$ok}"
bad_acquire "name as array" "{\"name\":[\"e:1\"],$ok}"
bad_acquire "name as object" "{\"name\":{\"a\":1},$ok}"
bad_acquire "owner_id as number" '{"name":"e:1","owner_id":7,"ttl_ms":1000}'
bad_acquire "owner_id as bool" '{"name":"e:1","owner_id":false,"ttl_ms":1000}'
bad_acquire "request_id as number" "{\"name\":\"e:1\",$ok,\"request_id\":5}"
bad_acquire "lock_delay_ms as string" "{\"name\":\"e:1\",$ok,\"lock_delay_ms\":\"5\"}"
bad_acquire "lock_delay_ms negative" "{\"name\":\"e:1\",$ok,\"lock_delay_ms\":-1}"
bad_acquire "lock_delay_ms as float" "{\"name\":\"e:1\",$ok,\"lock_delay_ms\":1.5}"
bad_acquire "lock_delay_ms over an hour" "{\"name\":\"e:1\",$ok,\"lock_delay_ms\":3600001}"
pass "wrong types: 400"

# --- missing fields
bad_acquire "missing name" '{"owner_id":"o","ttl_ms":1000}'
bad_acquire "missing owner_id" '{"name":"e:1","ttl_ms":1000}'
bad_acquire "missing ttl_ms" '{"name":"e:1","owner_id":"o"}'
bad_acquire "name null" "{\"name\":null,$ok}"
pass "missing fields: 400"

# --- out of range
for t in 99 0 -1 -1000 3600001 100000000; do
    bad_acquire "ttl_ms $t" "{\"name\":\"e:1\",\"owner_id\":\"o\",\"ttl_ms\":$t}"
done
bad_acquire "name of 257 bytes" "{\"name\":\"$n257\",$ok}"
bad_acquire "empty name" "{\"name\":\"\",$ok}"
bad_acquire "owner_id of 129 bytes" "{\"name\":\"e:1\",\"owner_id\":\"$o129\",\"ttl_ms\":1000}"
bad_acquire "empty owner_id" '{"name":"e:1","owner_id":"","ttl_ms":1000}'
# 257 bytes made of 2-byte characters plus one: the limit is in bytes.
n2=$(printf 'é%.0s' $(seq 1 128))x
bad_acquire "name of 257 UTF-8 bytes" "{\"name\":\"$n2\",$ok}"
pass "ttl_ms outside [100, 3600000], over-long and empty names and owners: 400"

# --- non-printable and invalid UTF-8
for esc in '\u0001' '\n' '\t' '\u001f' '\u007f' '\u0000'; do
    bad_acquire "name with $esc" "{\"name\":\"e:1${esc}x\",$ok}"
done
bad_acquire "owner_id with a control char" '{"name":"e:1","owner_id":"o\u0002","ttl_ms":1000}'
raw_bad=$(printf '{"name":"e:1\xff\xfe","owner_id":"o","ttl_ms":1000}')
bad_acquire "invalid UTF-8 (0xff)" "$raw_bad"
raw_bad=$(printf '{"name":"e:1\xc3","owner_id":"o","ttl_ms":1000}')
bad_acquire "truncated UTF-8 sequence" "$raw_bad"
raw_bad=$(printf '{"name":"e:1\xed\xa0\x80","owner_id":"o","ttl_ms":1000}')
bad_acquire "UTF-8 encoded surrogate" "$raw_bad"
bad_acquire "lone surrogate escape" "{\"name\":\"e:1\\ud800\",$ok}"
pass "non-printable names and invalid UTF-8: 400"

# --- renew and release with bad bodies against the live lease
p="/v1/leases/e%3Alive"
for m in PATCH DELETE; do
    for b in '{' "{\"token\":\"$ltok\",\"lease_secret\":\"$lsec\"}" \
        "{\"token\":$ltok.5,\"lease_secret\":\"$lsec\"}" \
        "{\"lease_secret\":\"$lsec\"}" "{\"token\":$ltok}" \
        "{\"token\":$ltok,\"lease_secret\":5}" \
        "{\"token\":$ltok,\"lease_secret\":\"$lsec\",\"token\":$ltok}" \
        "{\"token\":$ltok,\"lease_secret\":\"$lsec\"} garbage" \
        "{\"token\":$ltok,\"lease_secret\":\"$lsec\",\"ttl_ms\":99}" \
        "{\"token\":$ltok,\"lease_secret\":\"$lsec\",\"ttl_ms\":3600001}" \
        "{\"token\":$ltok,\"lease_secret\":\"$lsec\",\"ttl_ms\":\"500\"}" ''; do
        [ "$m" = DELETE ] && [[ $b == *ttl_ms* ]] && continue
        rj "$m" "$p" "$b"
        expect_error 400 bad_request "$m e:live with body '$b'"
    done
done
pass "renew and release with malformed, mistyped or missing fields: 400"

# --- reads with bad parameters
for q in "token=abc" "token=" "token=1.5" "token=1x"; do
    rj GET "/v1/leases/e%3Alive/check?$q"
    expect_error 400 bad_request "check ?$q"
done
for q in "limit=abc" "limit=-1" "limit=1.5" "limit=%zz" "prefix=%zz" "after=a%2" \
    "limit=5&x=%g0"; do
    rj GET "/v1/leases?$q"
    expect_error 400 bad_request "list ?$q"
done
rj GET "/v1/leases/e%3Alive/check?token=%31%zz"
expect_error 400 bad_request "check with a token of bad percent-encoding"
# a decoded NUL must not shorten "true%00x" to "true"
for q in "force=true%00x" "force=%zz" "force=yes"; do
    rj DELETE "/v1/leases/e%3Alive?$q" "{}"
    expect_error 400 bad_request "release ?$q"
done
rj GET "/v1/leases/e%3Alive"
expect_code 200 "e:live still held after the refused force releases"
for path in "/v1/leases/e%zz" "/v1/leases/e%2" "/v1/leases/e%00x" "/v1/leases/e%01x" \
    "/v1/leases/e%FFx" "/v1/leases/e%zz/check?token=1"; do
    rj GET "$path"
    expect_error 400 bad_request "GET $path (bad percent-encoding or name)"
done
rj PATCH "/v1/leases/e%zz" "{\"token\":$ltok,\"lease_secret\":\"$lsec\"}"
expect_error 400 bad_request "renew with a bad percent-encoding"
pass "check and list with malformed parameters, malformed path names: 400"

# --- 415 unsupported media type
good="{\"name\":\"e:mt\",$ok}"
for ct in text/plain application/xml multipart/form-data text/json; do
    rq POST /v1/leases "$ct" "$good"
    expect_error 415 unsupported_media_type "Content-Type $ct"
done
rq PATCH "$p" text/plain "{\"token\":$ltok,\"lease_secret\":\"$lsec\",\"ttl_ms\":100}"
expect_error 415 unsupported_media_type "renew as text/plain"
rq DELETE "$p" text/plain "{\"token\":$ltok,\"lease_secret\":\"$lsec\"}"
expect_error 415 unsupported_media_type "release as text/plain"
pass "text/plain and other types: 415 unsupported_media_type"

# --- 413 body over 4 KiB (unknown fields are ignored, so only size matters)
pad() { printf 'p%.0s' $(seq 1 "$1"); }
base="{\"name\":\"e:big\",$ok,\"x\":\"\"}"
big="{\"name\":\"e:big\",$ok,\"x\":\"$(pad $((4097 - ${#base})))\"}"
[ ${#big} = 4097 ] || fail "test bug: body is ${#big} bytes"
rj POST /v1/leases "$big"
expect_error 413 payload_too_large "body of 4097 bytes"
big2="{\"name\":\"e:big\",$ok,\"x\":\"$(pad 100000)\"}"
rj POST /v1/leases "$big2"
expect_error 413 payload_too_large "body of 100 KB"
rq POST /v1/leases application/json "$big2" -H 'Transfer-Encoding: chunked'
expect_error 413 payload_too_large "chunked body of 100 KB"
rj PATCH "$p" "{\"token\":$ltok,\"lease_secret\":\"$lsec\",\"ttl_ms\":100,\"x\":\"$(pad 5000)\"}"
expect_error 413 payload_too_large "renew body over 4 KiB"
pass "bodies over 4 KiB: 413 payload_too_large"

# --- 431 headers over 8 KiB
rq GET /v1/leases/e%3Alive - "" -H "X-Pad: $(pad 9000)"
expect_error 431 request_header_fields_too_large "one 9000-byte header"
hdr_args=()
for i in $(seq 1 100); do hdr_args+=(-H "X-Pad-$i: $(pad 90)"); done
rq POST /v1/leases application/json "$good" "${hdr_args[@]}"
expect_error 431 request_header_fields_too_large "100 headers of 100 bytes"
pass "headers over 8 KiB: 431 request_header_fields_too_large"

# --- nothing changed
# Names that cannot exist are refused in paths too (400); the full list
# below shows that no lease was created for them either.
for n in "$n257" "$n2"; do
    get_lease "$n"
    [ "$CODE" = 400 ] || [ "$CODE" = 404 ] || fail "GET of an invalid name: $CODE $BODY"
done
for n in "e:1" "e:2" "e:mt" "e:big"; do
    get_lease "$n"
    expect_error 404 not_found "no lease for $n"
    [ "$(floor_of "$n")" = 0 ] || fail "floor of $n moved: $BODY"
done
get_lease "e:live"
expect_code 200 "e:live after the bad requests"
expect_field token "$ltok"
expect_field owner_id keeper
e=$(jget expires_in_ms)
el=$(($(now_ms) - live_at))
[ "$e" -ge $((600000 - el - 100)) ] && [ "$e" -le 600000 ] ||
    fail "e:live was renewed or shortened by a rejected request ($el ms after its grant): $BODY"
check_token "e:live" "$ltok"
expect_field current true
expect_field floor "$ltok"
rj GET "/v1/leases?prefix=e%3A"
got=$(for i in 0 1 2 3 4; do jget "leases.$i.name" 2>/dev/null || true; echo; done | grep . | tr '\n' ' ')
[ "$got" = "e:live e:step e:step2 " ] || fail "list after bad requests: '$got'"
rj GET "/v1/leases?limit=100"
got=$(for i in 0 1 2 3 4; do jget "leases.$i.name" 2>/dev/null || true; echo; done | grep . | tr '\n' ' ')
[ "$got" = "e:live e:step e:step2 " ] || fail "full list after bad requests: '$got'"
acquire "e:after" keeper 1000
expect_code 201 "acquire after the bad requests"
t=$(jget token)
[ "$t" -gt "$last_tok" ] || fail "token $t not above $last_tok"
if [ "$consecutive" = 1 ]; then
    [ "$t" = $((last_tok + 1)) ] || fail "rejected requests consumed tokens: $last_tok then $t"
fi
pass "no rejected request created, extended or ended a lease, or consumed a token"

# --- the boundaries themselves are accepted
acquire "e:min" o 100
expect_code 201 "ttl_ms 100"
acquire "e:max" o 3600000
expect_code 201 "ttl_ms 3600000"
expect_field ttl_ms 3600000
acquire "e:unknown" o 1000 '"color":"blue","nested":{"a":[1,2]}'
expect_code 201 "unknown fields are ignored"
fit="{\"name\":\"e:fit\",$ok,\"x\":\"\"}"
fit="{\"name\":\"e:fit\",$ok,\"x\":\"$(pad $((4096 - ${#fit})))\"}"
[ ${#fit} = 4096 ] || fail "test bug: body is ${#fit} bytes"
rj POST /v1/leases "$fit"
expect_code 201 "body of exactly 4096 bytes"
rq GET /healthz - "" -H "X-Pad: $(pad 6000)"
expect_code 200 "a 6000-byte header is within 8 KiB"
pass "ttl_ms 100 and 3600000, unknown fields, 4096-byte body, 6 KB header accepted"
