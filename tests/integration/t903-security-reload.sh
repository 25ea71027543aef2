#!/usr/bin/env bash
# Reload of the auth file on SIGHUP (CONTRACT §9): a new token works and a
# removed one gets 401 at once; leases stay bound to their principal by
# name across the reload; a keep-alive connection opened before the reload
# keeps working (and is judged by the new file); a broken file is refused
# and the old one stays in force; the server never stops.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-security.sh"
sec_need_auth_flag
need_tools
sec_write_auth "$T/auth.json"
tn_start_server --auth-file "$T/auth.json"

as_acquire "$TOK_INDEXER" "shard:r" idx 60000
expect_code 201 "indexer acquires before the reload"
tok=$(jget token)
sec=$(jget lease_secret)
raw_open
raw_get "/v1/leases/shard:r" "$TOK_INDEXER"
[ "$RAW_CODE" = 200 ] || fail "raw GET before reload: $RAW_CODE $RAW_BODY"

# The new file: indexer gets a new token (the old one is removed), "late"
# is a new principal, "other" is gone.
OLD_INDEXER=$TOK_INDEXER
OLD_OTHER=$TOK_OTHER
TOK_INDEXER=$(sec_new_token)
TOK_LATE=$(sec_new_token)
shard='[{"prefix": "shard:", "actions": ["acquire", "read"]}]'
{
    printf '{"principals": [\n'
    sec_principal indexer "$TOK_INDEXER" "$shard"
    printf ',\n'
    sec_principal late "$TOK_LATE" "$shard"
    printf ',\n{"name": "ops", "token_sha256": "%s", "admin": true}\n]}\n' \
        "$(sec_sha "$TOK_OPS")"
} >"$T/auth.new"
mv "$T/auth.new" "$T/auth.json"
kill -HUP "$SERVER_PID"

# Bounded wait until the new principal is accepted.
for i in $(seq 1 100); do
    as_get "$TOK_LATE" "shard:r"
    [ "$CODE" = 200 ] && break
    [ "$i" = 100 ] && fail "new token not accepted 5 s after SIGHUP: $CODE $BODY"
    sleep 0.05
done
kill -0 "$SERVER_PID" 2>/dev/null || fail "tenured exited on SIGHUP"
as_get "$OLD_INDEXER" "shard:r"
expect_unauth "the removed token of indexer after the reload"
as_get "$OLD_OTHER" "shard:r"
expect_unauth "the token of a removed principal after the reload"
as_get "$TOK_INDEXER" "shard:r"
expect_code 200 "indexer's new token"
expect_field token "$tok"
pass "SIGHUP reload: the new token works, removed ones get 401"

# The connection opened before the reload is still served, by the new file.
raw_get "/v1/leases/shard:r" "$TOK_INDEXER"
[ "$RAW_CODE" = 200 ] || fail "old connection, new token: $RAW_CODE $RAW_BODY"
raw_get "/v1/leases/shard:r" "$OLD_INDEXER"
[ "$RAW_CODE" = 401 ] || fail "old connection, removed token: $RAW_CODE $RAW_BODY"
raw_get "/v1/leases/shard:r" "$TOK_LATE"
[ "$RAW_CODE" = 200 ] || fail "old connection after a 401: $RAW_CODE $RAW_BODY"
pass "a keep-alive connection from before the reload survives it"

# Leases stay bound to the principal's name, whatever its token.
as_renew "$TOK_LATE" "shard:r" "$tok" "$sec"
expect_forbidden "another principal renews after the reload"
as_renew "$TOK_INDEXER" "shard:r" "$tok" "$sec"
expect_code 200 "indexer renews its lease with its new token"
expect_field token "$tok"
pass "leases stay bound to their principal across a reload"

# A broken file is refused; the old table stays in force.
cp "$T/auth.json" "$T/auth.good"
printf '{"principals": [{"name": "late", "token_sha256": "zz"}]}\n' >"$T/auth.json"
kill -HUP "$SERVER_PID"
# Wait (bounded) until the failed reload is logged with its reason.
for i in $(seq 1 100); do
    grep -q token_sha256 "$T/tenured.log" && break
    [ "$i" = 100 ] && fail "the bad reload was not logged with its reason"
    sleep 0.05
done
kill -0 "$SERVER_PID" 2>/dev/null || fail "tenured exited on a bad reload"
as_get "$TOK_LATE" "shard:r"
expect_code 200 "the old file stays in force after a bad reload"
as_get "$TOK_INDEXER" "shard:r"
expect_code 200 "indexer still accepted after a bad reload"
raw_get "/v1/leases/shard:r" "$TOK_INDEXER"
[ "$RAW_CODE" = 200 ] || fail "old connection after a bad reload: $RAW_CODE"
pass "a broken file is refused on reload, the old one stays"

# A good file after a bad one is taken.  It rotates the admin token: both
# the old and the new one work while both hashes are listed.
TOK_OPS2=$(sec_new_token)
printf '{"principals": [{"name": "ops", "token_sha256": ["%s", "%s"], "admin": true}]}\n' \
    "$(sec_sha "$TOK_OPS")" "$(sec_sha "$TOK_OPS2")" >"$T/auth.json"
kill -HUP "$SERVER_PID"
for i in $(seq 1 100); do
    as_get "$TOK_LATE" "shard:r"
    [ "$CODE" = 401 ] && break
    [ "$i" = 100 ] && fail "reload after a bad one not taken: $CODE $BODY"
    sleep 0.05
done
as_get "$TOK_OPS" "shard:r"
expect_code 200 "the old admin token while both are listed"
as_get "$TOK_OPS2" "shard:r"
expect_code 200 "the new admin token while both are listed"
raw_get "/v1/leases/shard:r" "$TOK_OPS2"
[ "$RAW_CODE" = 200 ] || fail "old connection after three reloads: $RAW_CODE"
pass "a good file after a bad one is taken; a listed pair of hashes both work"

# Finish the rotation: only the new hash.
printf '{"principals": [{"name": "ops", "token_sha256": "%s", "admin": true}]}\n' \
    "$(sec_sha "$TOK_OPS2")" >"$T/auth.json"
kill -HUP "$SERVER_PID"
for i in $(seq 1 100); do
    as_get "$TOK_OPS" "shard:r"
    [ "$CODE" = 401 ] && break
    [ "$i" = 100 ] && fail "the rotated-out admin token still works: $CODE $BODY"
    sleep 0.05
done
as_get "$TOK_OPS2" "shard:r"
expect_code 200 "the new admin token after the rotation"
raw_get "/v1/leases/shard:r" "$TOK_OPS"
[ "$RAW_CODE" = 401 ] || fail "old connection, rotated-out token: $RAW_CODE"
raw_close
pass "token rotation: the old token gets 401 once its hash is removed"

# A clean stop after five reloads: every table was freed exactly once (the
# sanitizer build fails the exit code on a leak or a double free).
kill -TERM "$SERVER_PID"
rc=0
wait "$SERVER_PID" || rc=$?
[ "$rc" = 0 ] || fail "tenured exited $rc on SIGTERM after the reloads"
pass "clean exit after the reloads"
