#!/usr/bin/env bash
# Auth and ACLs (CONTRACT §9) over HTTP: 401 {"error":"unauthorized"} without
# or with bad credentials; 403 {"error":"forbidden"} outside one's prefixes,
# for read vs acquire, and for list prefixes reaching beyond a rule; renew
# and release bound to the principal that acquired the lease; admin force
# release (403 for everyone else).  A rejected request changes nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-security.sh"
sec_need_auth_flag
need_tools
sec_write_auth "$T/auth.json"
tn_start_server --auth-file "$T/auth.json"

# --- probes stay open, so supervisors and load balancers need no token;
# /metrics needs a token
rq GET /healthz -
expect_code 200 "healthz without credentials"
rq GET /readyz -
expect_code 200 "readyz without credentials"
# /metrics holds counts only, but still needs some valid principal.
rq GET /metrics -
expect_unauth "metrics without credentials"
areq "$TOK_CFG" GET /metrics
expect_code 200 "metrics with any valid principal"
grep -q '^tenure_' <<<"$BODY" || fail "metrics body: $BODY"
pass "probes open without credentials, /metrics needs a valid token"

# --- 401: no or bad credentials, on every lease route
for hdr in "" "Bearer" "Bearer " "Bearer not-a-known-token" \
    "Bearer $TOK_INDEXER-x" "Bearer $(sec_sha "$TOK_INDEXER")" \
    "Basic $(printf 'indexer:%s' "$TOK_INDEXER" | base64 -w0)" \
    "Bearer $TOK_INDEXER extra" "Token $TOK_INDEXER"; do
    args=()
    [ -n "$hdr" ] && args=(-H "Authorization: $hdr")
    rq POST /v1/leases application/json \
        '{"name":"shard:401","owner_id":"a","ttl_ms":5000}' "${args[@]}"
    expect_unauth "acquire with Authorization '${hdr:-(none)}'"
    rq GET "/v1/leases/shard:401" application/json "" "${args[@]}"
    expect_unauth "get with Authorization '${hdr:-(none)}'"
done
for path in "/v1/leases?prefix=shard:" "/v1/leases/shard:1/check?token=1"; do
    areq - GET "$path"
    expect_unauth "GET $path without credentials"
done
areq - PATCH /v1/leases/shard:1 '{"token":1,"lease_secret":"00"}'
expect_unauth "renew without credentials"
areq - DELETE /v1/leases/shard:1 '{"token":1,"lease_secret":"00"}'
expect_unauth "release without credentials"
# Credentials are checked before the body: a bad body is still 401.
areq - POST /v1/leases '{"name":'
expect_unauth "malformed body without credentials"
areq "$TOK_READER" GET "/v1/leases/shard:401"
expect_error 404 not_found "nothing was acquired by the rejected requests"
pass "401 unauthorized without or with bad credentials, nothing changed"

# --- acquire within and outside one's prefixes
as_acquire "$TOK_INDEXER" "shard:1" idx 30000
expect_code 201 "indexer acquires shard:1"
tok1=$(jget token)
sec1=$(jget lease_secret)
for n in "cfg/1" "shard" "Shard:1" "xshard:1" "other:1"; do
    as_acquire "$TOK_INDEXER" "$n" idx 30000
    expect_forbidden "indexer acquires $n"
done
as_acquire "$TOK_READER" "shard:2" rd 30000
expect_forbidden "read-only principal acquires"
as_acquire "$TOK_CFG" "cfg/1" c 30000
expect_forbidden "read-only cfgreader acquires within its read prefix"
areq "$TOK_OPS" GET "/v1/leases?prefix="
expect_code 200 "admin lists everything"
[ "$(printf '%s' "$BODY" | grep -o '"name"' | wc -l)" = 1 ] ||
    fail "forbidden acquires created leases: $BODY"
pass "acquire: 201 within the prefix, 403 outside it and for read-only"

# --- read within and outside one's prefixes
for t in "$TOK_INDEXER" "$TOK_READER" "$TOK_OPS"; do
    as_get "$t" "shard:1"
    expect_code 200 "get shard:1"
    expect_field token "$tok1"
    areq "$t" GET "/v1/leases/shard:1/check?token=$tok1"
    expect_code 200 "check shard:1"
    areq "$t" GET "/v1/leases?prefix=shard:"
    expect_code 200 "list prefix shard:"
    areq "$t" GET "/v1/leases?prefix=shard:1"
    expect_code 200 "list a longer prefix"
done
# Authorization comes before lookup: no probing of names outside a prefix.
as_get "$TOK_CFG" "shard:1"
expect_forbidden "cfgreader gets an existing shard:1"
as_get "$TOK_CFG" "shard:nope"
expect_forbidden "cfgreader gets a missing shard:nope"
areq "$TOK_CFG" GET "/v1/leases/shard:1/check?token=$tok1"
expect_forbidden "cfgreader checks shard:1"
as_get "$TOK_CFG" "cfg/x"
expect_error 404 not_found "cfgreader gets within its prefix"
as_get "$TOK_INDEXER" "cfg/x"
expect_forbidden "indexer reads outside its prefixes"
for p in "" "shard" "s" "cfg/"; do
    areq "$TOK_INDEXER" GET "/v1/leases?prefix=$p"
    expect_forbidden "indexer lists prefix '$p'"
done
areq "$TOK_INDEXER" GET "/v1/leases"
expect_forbidden "indexer lists without a prefix"
pass "read: 200 within the prefix, 403 outside it, before any lookup"

# --- renew and release are bound to the acquiring principal
as_renew "$TOK_OTHER" "shard:1" "$tok1" "$sec1"
expect_forbidden "another principal renews with the right token and secret"
as_release "$TOK_OTHER" "shard:1" "$tok1" "$sec1"
expect_forbidden "another principal releases with the right token and secret"
as_renew "$TOK_READER" "shard:1" "$tok1" "$sec1"
expect_forbidden "a read-only principal renews"
as_release "$TOK_READER" "shard:1" "$tok1" "$sec1"
expect_forbidden "a read-only principal releases"
as_get "$TOK_READER" "shard:1"
expect_code 200 "shard:1 survives"
expect_field token "$tok1"
expect_field owner_id idx
as_renew "$TOK_INDEXER" "shard:1" "$tok1" "$sec1"
expect_code 200 "the acquiring principal renews"
expect_field token "$tok1"
bad=$(printf '%s' "$sec1" | tr '0-9a-f' '1-9a-f0')
as_renew "$TOK_INDEXER" "shard:1" "$tok1" "$bad"
expect_forbidden "the acquiring principal with a wrong secret"
as_release "$TOK_INDEXER" "shard:1" "$tok1" "$sec1"
expect_code 204 "the acquiring principal releases"
# The other principal may take the name now, and then it is bound to it.
as_acquire "$TOK_OTHER" "shard:1" oth 30000
expect_code 201 "other acquires the released name"
tok2=$(jget token)
sec2=$(jget lease_secret)
[ "$tok2" -gt "$tok1" ] || fail "token did not increase: $tok1 -> $tok2"
as_renew "$TOK_INDEXER" "shard:1" "$tok2" "$sec2"
expect_forbidden "indexer renews other's lease"
as_renew "$TOK_OTHER" "shard:1" "$tok2" "$sec2"
expect_code 200 "other renews its lease"
# A request_id retry returns the grant (and its secret) only to the
# principal that acquired it.
rid='{"name":"shard:rid","owner_id":"w","ttl_ms":30000,"request_id":"r-1"}'
areq "$TOK_INDEXER" POST /v1/leases "$rid"
expect_code 201 "acquire with a request_id"
rtok=$(jget token)
rsec=$(jget lease_secret)
areq "$TOK_INDEXER" POST /v1/leases "$rid"
expect_code 200 "the acquirer's retry returns the grant"
expect_field token "$rtok"
expect_field lease_secret "$rsec"
areq "$TOK_OTHER" POST /v1/leases "$rid"
expect_error 409 held "another principal replays the request_id"
expect_no_field "replayed request_id by another principal" lease_secret
pass "renew, release and request_id retries bound to the acquiring principal"

# --- admin force release
for t in "$TOK_INDEXER" "$TOK_OTHER" "$TOK_READER" "$TOK_CFG"; do
    as_force "$t" "shard:1"
    expect_forbidden "force release by a non-admin"
done
as_force - "shard:1"
expect_unauth "force release without credentials"
as_force "not-a-token" "shard:1"
expect_unauth "force release with a bad token"
as_get "$TOK_READER" "shard:1"
expect_code 200 "shard:1 survives forbidden force releases"
expect_field token "$tok2"
as_force "$TOK_OPS" "shard:1"
expect_code 204 "admin force release"
as_get "$TOK_READER" "shard:1"
expect_error 404 not_found "force-released lease is gone"
areq "$TOK_READER" GET "/v1/leases/shard:1/check?token=$tok2"
expect_code 200 "check after force release"
expect_field current false
expect_field floor "$tok2" "the floor stays at the revoked token"
as_renew "$TOK_OTHER" "shard:1" "$tok2" "$sec2"
expect_error 409 lost "renew after force release"
as_acquire "$TOK_INDEXER" "shard:1" idx 30000
expect_code 201 "acquire after force release"
[ "$(jget token)" -gt "$tok2" ] || fail "token after force release not higher"
# Admins may acquire anywhere.
as_acquire "$TOK_OPS" "anything:1" ops 30000
expect_code 201 "admin acquires outside every rule"
pass "force release: 204 for admins, 401/403 for everyone else"
