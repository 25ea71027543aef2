#!/usr/bin/env bash
# Reads: GET /v1/leases/{name} (200 / 404 not_found, never the secret), the
# list with prefix, limit, after and "next" in name order, and check
# (current, token, floor; the floor stays T after release or expiry until
# the next grant, 0 for names never granted).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools
tn_start_server

# --- GET
acquire "rd:1" reader 60000
expect_code 201 "acquire rd:1"
tok=$(jget token)
sec=$(jget lease_secret)
get_lease "rd:1"
expect_code 200 "GET rd:1"
expect_fields "GET" name owner_id token expires_in_ms
expect_field name "rd:1"
expect_field owner_id reader
expect_field token "$tok"
e1=$(expect_int expires_in_ms "GET")
[ "$e1" -gt 0 ] && [ "$e1" -le 60000 ] || fail "expires_in_ms $e1"
expect_no_field "GET" lease_secret
grep -q "$sec" <<<"$BODY" && fail "GET reveals the lease secret"
sleep 0.1
get_lease "rd:1"
e2=$(jget expires_in_ms)
[ "$e2" -lt "$e1" ] || fail "expires_in_ms does not decrease: $e1 then $e2"
get_lease "rd:never"
expect_error 404 not_found "GET of a name never granted"
pass "GET 200 with name, owner_id, token, expires_in_ms (no secret); 404 not_found"

# --- list
names=("ls:c" "ls:a" "ls:e" "ls:b" "ls:d")
for n in "${names[@]}"; do
    acquire "$n" lister 60000
    expect_code 201 "acquire $n"
done
acquire "lt:other" lister 60000
acquire "ls:gone" lister 5000
release "ls:gone" "$(jget token)" "$(jget lease_secret)"
expect_code 204 "release ls:gone"

rj GET "/v1/leases?prefix=ls%3A"
expect_code 200 "list prefix=ls:"
expect_fields "list" leases next
got=$(for i in 0 1 2 3 4 5 6; do jget "leases.$i.name" 2>/dev/null || true; echo; done | grep . | tr '\n' ' ')
[ "$got" = "ls:a ls:b ls:c ls:d ls:e " ] || fail "list prefix=ls: gave '$got': $BODY"
[ "$(jget next)" = null ] || fail "next is not null at the end: $BODY"
expect_fields "list entry" leases.0.name leases.0.owner_id leases.0.token leases.0.expires_in_ms
expect_no_field "list entry" leases.0.lease_secret
[ "$(jget leases.0.owner_id)" = lister ] || fail "list owner_id: $BODY"
pass "list by prefix, name order, expired and released leases left out, next null"

# Pages of two, following "next" as "after".
after=""
all=""
for page in 1 2 3 4; do
    q="prefix=ls%3A&limit=2"
    [ -n "$after" ] && q="$q&after=$(enc "$after")"
    rj GET "/v1/leases?$q"
    expect_code 200 "list page $page"
    c=0
    for i in 0 1 2; do
        n=$(jget "leases.$i.name" 2>/dev/null) || continue
        all+="$n "
        c=$((c + 1))
    done
    [ "$c" -le 2 ] || fail "limit=2 returned $c entries"
    after=$(jget next)
    [ "$after" = null ] && break
    [ "$c" = 2 ] || fail "a page with next has only $c entries: $BODY"
done
[ "$after" = null ] || fail "pagination never ended"
[ "$all" = "ls:a ls:b ls:c ls:d ls:e " ] || fail "pages gave '$all'"
rj GET "/v1/leases?prefix=ls%3A&after=ls%3Ab"
expect_code 200 "list after=ls:b"
[ "$(jget leases.0.name)" = "ls:c" ] || fail "after=ls:b does not start at ls:c: $BODY"
rj GET "/v1/leases?prefix=zz%3A"
expect_code 200 "empty list"
[ "$(jget leases)" = "[]" ] || fail "empty prefix: $BODY"
[ "$(jget next)" = null ] || fail "empty list next: $BODY"
rj GET "/v1/leases"
expect_code 200 "list without prefix"
grep -q '"lt:other"' <<<"$BODY" || fail "list without prefix misses lt:other: $BODY"
pass "list pages with limit, after and next"

# --- check
check_token "rd:1" "$tok"
expect_code 200 "check live token"
expect_fields "check" current token floor
expect_field current true
expect_field token "$tok"
expect_field floor "$tok"
check_token "rd:1" $((tok - 1))
expect_field current false "older token"
expect_field token "$tok"
check_token "rd:1" $((tok + 100))
expect_field current false "higher token"
check_token "ck:never" 7
expect_code 200 "check of a name never granted"
expect_field current false
expect_field token null
expect_field floor 0
# After release: floor stays T until the next grant.
release "rd:1" "$tok" "$sec"
expect_code 204 "release rd:1"
check_token "rd:1" "$tok"
expect_field current false "after release"
expect_field token null "after release"
expect_field floor "$tok" "floor after release"
# After expiry: the same.
acquire "ck:exp" x 100
etok=$(jget token)
wait_gone "ck:exp"
check_token "ck:exp" "$etok"
expect_field current false "after expiry"
expect_field token null "after expiry"
expect_field floor "$etok" "floor after expiry"
# Grants elsewhere do not move this name's floor; the next grant here does.
acquire "ck:elsewhere" x 1000
check_token "rd:1" "$tok"
expect_field floor "$tok" "floor unchanged by other names"
acquire "rd:1" y 1000
t2=$(jget token)
check_token "rd:1" "$tok"
expect_field current false "old token after re-grant"
expect_field token "$t2"
expect_field floor "$t2" "floor after the next grant"
pass "check: current, token, floor (kept after release and expiry, 0 when never granted)"
