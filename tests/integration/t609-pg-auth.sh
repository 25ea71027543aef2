#!/usr/bin/env bash
# --auth-file with the PostgreSQL store: the acquiring principal is stored
# with the lease, so renew and release by another principal are refused
# (403) even with the right token and secret, on any instance; a
# request_id retry returns the grant only to its principal; a blocking
# acquire keeps its principal; an admin force release revokes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-security.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need
pg_fresh_schema t609
sec_write_auth "$T/auth.json"
pg_start_instance 1 "$PG_URL" --auth-file "$T/auth.json"
pg_start_instance 2 "$PG_URL" --auth-file "$T/auth.json"
URL=${URLS[1]}

as_acquire "$TOK_INDEXER" "shard:1" idx 30000
expect_code 201 "indexer acquires shard:1"
tok1=$(jget token)
sec1=$(jget lease_secret)
for u in "${URLS[1]}" "${URLS[2]}"; do
    URL=$u
    as_renew "$TOK_OTHER" "shard:1" "$tok1" "$sec1"
    expect_forbidden "another principal renews with the right token and secret"
    as_release "$TOK_OTHER" "shard:1" "$tok1" "$sec1"
    expect_forbidden "another principal releases with the right token and secret"
done
as_get "$TOK_READER" "shard:1"
expect_code 200 "shard:1 survives"
expect_field token "$tok1"
as_renew "$TOK_INDEXER" "shard:1" "$tok1" "$sec1"
expect_code 200 "the acquiring principal renews on the other instance"
bad=$(printf '%s' "$sec1" | tr '0-9a-f' '1-9a-f0')
as_renew "$TOK_INDEXER" "shard:1" "$((tok1 + 1000))" "$sec1"
expect_error 409 lost "a wrong token"
as_renew "$TOK_INDEXER" "shard:1" "$tok1" "$bad"
expect_forbidden "the acquiring principal with a wrong secret"
as_release "$TOK_INDEXER" "shard:1" "$tok1" "$sec1"
expect_code 204 "the acquiring principal releases"
pass "renew and release bound to the acquiring principal, on both instances"

as_acquire "$TOK_OTHER" "shard:1" oth 30000
expect_code 201 "other acquires the released name"
tok2=$(jget token)
sec2=$(jget lease_secret)
[ "$tok2" -gt "$tok1" ] || fail "token did not increase: $tok1 -> $tok2"
as_renew "$TOK_INDEXER" "shard:1" "$tok2" "$sec2"
expect_forbidden "indexer renews other's lease"
rid='{"name":"shard:rid","owner_id":"w","ttl_ms":30000,"request_id":"r-1"}'
areq "$TOK_INDEXER" POST /v1/leases "$rid"
expect_code 201 "acquire with a request_id"
rtok=$(jget token)
areq "$TOK_INDEXER" POST /v1/leases "$rid"
expect_code 200 "the acquirer's retry returns the grant"
expect_field token "$rtok"
areq "$TOK_OTHER" POST /v1/leases "$rid"
expect_error 409 held "another principal replays the request_id"
expect_no_field "replayed request_id by another principal" lease_secret
pass "a request_id retry returns the grant only to its principal"

# A blocking acquire stores its principal too.
areq "$TOK_INDEXER" POST /v1/leases '{"name":"shard:2","owner_id":"a","ttl_ms":300}'
expect_code 201 "holder of shard:2"
areq "$TOK_OTHER" POST /v1/leases '{"name":"shard:2","owner_id":"b","ttl_ms":30000,"wait_ms":5000}'
expect_code 201 "other waits for shard:2"
wtok=$(jget token)
wsec=$(jget lease_secret)
as_renew "$TOK_INDEXER" "shard:2" "$wtok" "$wsec"
expect_forbidden "indexer renews the waiter's grant"
as_renew "$TOK_OTHER" "shard:2" "$wtok" "$wsec"
expect_code 200 "the waiter's principal renews"
pass "a waiter's grant is bound to its principal"

as_force "$TOK_OTHER" "shard:1"
expect_forbidden "force release by a non-admin"
as_force "$TOK_OPS" "shard:1"
expect_code 204 "admin force release"
as_renew "$TOK_OTHER" "shard:1" "$tok2" "$sec2"
expect_error 409 lost "renew after force release"
pass "admin force release"
