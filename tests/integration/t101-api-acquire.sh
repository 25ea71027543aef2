#!/usr/bin/env bash
# Acquire (POST /v1/leases): 201 and its fields, 409 held with the holder,
# tokens increasing, request_id retries, lock_delay_ms after expiry (not
# after release), wait_ms (blocking acquire, or a 400 where it does not
# exist), accepted media types, names at the length limits and names with
# "/" (sent as %2F).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools
tn_start_server

# WAIT_MS_STATUS=400: the server has no waiting and must refuse wait_ms.
WAIT_MS_STATUS=${WAIT_MS_STATUS:-wait}
WAIT_MS_ERROR=${WAIT_MS_ERROR:-bad_request}

# --- 201 and its fields
acquire "shard:8841" indexer-17 10000
expect_code 201 "acquire"
expect_fields "acquire" name owner_id token lease_secret ttl_ms expires_in_ms
expect_field name "shard:8841"
expect_field owner_id indexer-17
t1=$(expect_int token "acquire")
ttl=$(expect_int ttl_ms "acquire")
exp=$(expect_int expires_in_ms "acquire")
s1=$(jget lease_secret)
[ "$t1" -ge 1 ] || fail "token $t1 is not positive"
[ "$ttl" = 10000 ] || fail "ttl_ms $ttl, asked 10000"
[ "$exp" -gt 9000 ] && [ "$exp" -le 10000 ] || fail "expires_in_ms $exp not in (9000,10000]"
[[ $s1 =~ ^[0-9a-fA-F]{32,}$ ]] || fail "lease_secret is not >= 32 hex chars: $s1"
grep -qi '^content-type: application/json' <<<"$HDRS" ||
    fail "acquire Content-Type is not application/json: $HDRS"
pass "acquire 201 with name, owner_id, token, lease_secret, ttl_ms, expires_in_ms"

# --- 409 held, for another owner and for the same owner without request_id
for owner in indexer-18 indexer-17; do
    acquire "shard:8841" "$owner" 5000
    expect_error 409 held "second acquire by $owner"
    expect_fields "held" holder.owner_id holder.token holder.expires_in_ms
    [ "$(jget holder.owner_id)" = indexer-17 ] || fail "holder.owner_id: $BODY"
    [ "$(jget holder.token)" = "$t1" ] || fail "holder.token: $BODY"
    he=$(expect_int holder.expires_in_ms "held")
    [ "$he" -gt 0 ] && [ "$he" -le "$exp" ] || fail "holder.expires_in_ms $he"
    expect_no_field "held" holder.lease_secret
    expect_no_field "held" lease_secret
done
pass "409 held with holder {owner_id, token, expires_in_ms}, no secret"

# --- tokens strictly increase, per name and globally
prev=$t1
for i in 1 2 3 4 5; do
    acquire "inc:$i" o 10000
    expect_code 201 "acquire inc:$i"
    t=$(jget token)
    [ "$t" -gt "$prev" ] || fail "token $t after $prev is not higher"
    prev=$t
done
acquire "inc:short" o 100
expect_code 201 "acquire inc:short"
ts=$(jget token)
wait_gone "inc:short"
acquire "inc:short" o2 1000
expect_code 201 "acquire inc:short after expiry"
[ "$(jget token)" -gt "$ts" ] || fail "re-grant after expiry did not get a higher token"
pass "tokens strictly increase, per name and across names"

# --- request_id retries
acquire "rid:1" w1 5000 '"request_id":"r-1"'
expect_code 201 "acquire with request_id"
rt=$(jget token)
rs=$(jget lease_secret)
acquire "rid:1" w1 5000 '"request_id":"r-1"'
expect_code 200 "retry with the same request_id"
expect_fields "retry" name owner_id token lease_secret ttl_ms expires_in_ms
[ "$(jget token)" = "$rt" ] || fail "retry returned token $(jget token), grant was $rt"
[ "$(jget lease_secret)" = "$rs" ] || fail "retry returned another lease_secret"
expect_field owner_id w1
acquire "rid:1" w1 5000 '"request_id":"r-2"'
expect_error 409 held "same owner, other request_id"
acquire "rid:1" w2 5000 '"request_id":"r-1"'
expect_error 409 held "other owner, same request_id"
release "rid:1" "$rt" "$rs"
expect_code 204 "release of the request_id grant"
acquire "rid:1" w1 5000 '"request_id":"r-1"'
expect_code 201 "request_id retry after release is a new acquire"
[ "$(jget token)" -gt "$rt" ] || fail "new acquire after release: token not higher"

acquire "rid:2" w1 150 '"request_id":"r-3"'
expect_code 201 "acquire rid:2"
rt3=$(jget token)
wait_gone "rid:2"
acquire "rid:2" w1 150 '"request_id":"r-3"'
expect_code 201 "request_id retry after expiry is a new acquire"
[ "$(jget token)" -gt "$rt3" ] || fail "new acquire after expiry: token not higher"
pass "request_id: retry 200 same grant; other id or owner 409; after release/expiry a new grant"

# --- lock_delay_ms: after expiry the name is blocked; after release it is not
acquire "ld:exp" a 200 '"lock_delay_ms":1500'
expect_code 201 "acquire with lock_delay_ms"
ld_tok=$(jget token)
wait_gone "ld:exp"
acquire "ld:exp" b 1000
expect_error 409 lock_delay "acquire during lock delay"
ra=$(expect_int retry_after_ms "lock_delay")
[ "$ra" -gt 0 ] && [ "$ra" -le 1500 ] || fail "retry_after_ms $ra not in (0,1500]"
[ "$(floor_of ld:exp)" = "$ld_tok" ] || fail "floor changed by a refused acquire"
sleep_ms $((ra + 60))
acquire "ld:exp" b 1000
expect_code 201 "acquire after the lock delay"
[ "$(jget token)" -gt "$ld_tok" ] || fail "token after lock delay not higher"
acquire "ld:rel" a 5000 '"lock_delay_ms":5000'
expect_code 201 "acquire ld:rel"
ld_rel_tok=$(jget token)
ld_rel_sec=$(jget lease_secret)
get_lease "ld:rel"
expect_field lock_delay_ms 5000 "GET shows the grant's lock_delay_ms"
rj GET "/v1/leases?prefix=ld:rel"
[ "$(jget leases.0.lock_delay_ms)" = 5000 ] || fail "the list shows no lock_delay_ms: $BODY"
set -- "$ld_rel_tok" "$ld_rel_sec"
release "ld:rel" "$1" "$2"
expect_code 204 "release ld:rel"
acquire "ld:rel" b 1000
expect_code 201 "acquire right after a release ignores lock_delay"
pass "lock_delay_ms applies after expiry (409 lock_delay, retry_after_ms), not after release"

# --- wait_ms: blocking acquire (FIFO per name, answered as a non-waiting
# acquire when it runs out).  A server without waiting must refuse wait_ms
# with a clear 400, never ignore it: run with WAIT_MS_STATUS=400 for that.
if [ "$WAIT_MS_STATUS" = 400 ]; then
    acquire "wait:1" a 1000 '"wait_ms":500'
    expect_error 400 "$WAIT_MS_ERROR" "acquire with wait_ms"
    get_lease "wait:1"
    expect_error 404 not_found "no lease after a refused wait_ms"
    pass "wait_ms refused with 400 (no waiting in this server)"
else
    t0=$(now_ms)
    # A wait far longer than any answer takes on a loaded machine: a
    # server that waited on a free name would take all of it.
    acquire "wait:1" a 60000 '"wait_ms":10000'
    expect_code 201 "wait_ms on a free name"
    w1=$(jget token)
    w1s=$(jget lease_secret)
    [ $(($(now_ms) - t0)) -lt 5000 ] || fail "wait_ms on a free name waited"
    t0=$(now_ms)
    acquire "wait:1" b 1000 '"wait_ms":300'
    el=$(($(now_ms) - t0))
    expect_error 409 held "wait_ms running out"
    [ "$(jget holder.token)" = "$w1" ] || fail "holder after waiting: $BODY"
    [ "$el" -ge 290 ] || fail "wait_ms 300 answered after only $el ms"
    # A waiter gets the name as soon as it is released, before anyone else.
    curl -s --max-time 10 -o "$T/waiter.body" -w '%{http_code}' \
        -H 'Content-Type: application/json' \
        -d '{"name":"wait:1","owner_id":"c","ttl_ms":5000,"wait_ms":5000}' \
        "$URL/v1/leases" >"$T/waiter.code" &
    waiter=$!
    tn_wait_metric tenure_waiters 1 "the waiter queued"
    release "wait:1" "$w1" "$w1s"
    expect_code 204 "release while a waiter queues"
    acquire "wait:1" d 1000
    expect_error 409 held "a non-waiting acquire never jumps the queue"
    [ "$(jget holder.owner_id)" = c ] || fail "name not granted to the waiter at once: $BODY"
    wait "$waiter" || fail "waiting curl failed"
    [ "$(cat "$T/waiter.code")" = 201 ] || fail "waiter got $(cat "$T/waiter.code"): $(cat "$T/waiter.body")"
    BODY=$(cat "$T/waiter.body")
    [ "$(jget token)" -gt "$w1" ] || fail "waiter's token not above $w1"
    acquire "wait:2" a 1000 '"wait_ms":"5"'
    expect_error 400 bad_request "wait_ms as a string"
    acquire "wait:2" a 1000 '"wait_ms":-1'
    expect_error 400 bad_request "negative wait_ms"
    pass "wait_ms: immediate when free, 409 when it runs out, FIFO grant on release"
fi

# --- media types read as JSON
body='{"name":"mt:1","owner_id":"o","ttl_ms":1000}'
rq POST /v1/leases - "$body"
expect_code 201 "no Content-Type"
rq POST /v1/leases application/x-www-form-urlencoded "${body/mt:1/mt:2}"
expect_code 201 "Content-Type application/x-www-form-urlencoded"
rq POST /v1/leases "application/json; charset=utf-8" "${body/mt:1/mt:3}"
expect_code 201 "Content-Type application/json; charset=utf-8"
out=$(curl -s --max-time 5 -w '\n%{http_code}' "$URL/v1/leases" -d "${body/mt:1/mt:4}")
[ "${out##*$'\n'}" = 201 ] || fail "curl -d (the README tour) got: $out"
pass "application/json, none and x-www-form-urlencoded are read as JSON"

# --- names and owners at the length limits, UTF-8 and "/" in names
n256=$(printf 'n%.0s' $(seq 1 256))
o128=$(printf 'o%.0s' $(seq 1 128))
acquire "$n256" "$o128" 1000
expect_code 201 "name of 256 bytes and owner_id of 128"
[ "$(jget name)" = "$n256" ] || fail "256-byte name not echoed"
get_lease "$n256"
expect_code 200 "GET of the 256-byte name"
acquire "ключ/é:1" "o" 5000
expect_code 201 "UTF-8 name"
get_lease "ключ/é:1"
expect_code 200 "GET of a UTF-8 name with %2F"
expect_field name "ключ/é:1"
acquire "a/b c" slash 5000
expect_code 201 "name with / and space"
stok=$(jget token)
ssec=$(jget lease_secret)
rj GET "/v1/leases/a%2Fb%20c"
expect_code 200 "GET a%2Fb%20c"
expect_field name "a/b c"
check_token "a/b c" "$stok"
expect_code 200 "check a%2Fb%20c"
expect_field current true
renew "a/b c" "$stok" "$ssec" 3000
expect_code 200 "renew a%2Fb%20c"
release "a/b c" "$stok" "$ssec"
expect_code 204 "release a%2Fb%20c"
rj GET "/v1/leases/a/b%20c"
expect_error 404 not_found "a literal / separates segments"
pass "256-byte names, 128-byte owners, UTF-8 and %2F names"
