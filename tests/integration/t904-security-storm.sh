#!/usr/bin/env bash
# 100 000 adversarial renew, release and force-release attempts against one
# live lease (CONTRACT §9): no token, wrong token, another scheme, another
# principal, a read-only principal, the holder's principal with a wrong
# secret or with the fencing token as the secret, force release by
# non-admins.  None may succeed, each gets its documented status, and
# afterwards the lease still has the same token and owner and its holder
# can still renew and release it.  Nothing secret is logged meanwhile.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-security.sh"
sec_need_auth_flag
need_tools
[ -x "$TN_BIN/tn-auth-storm" ] || fail "missing $TN_BIN/tn-auth-storm (build it first)"
sec_write_auth "$T/auth.json"
tn_start_server --auth-file "$T/auth.json" --log-level debug

as_acquire "$TOK_INDEXER" "shard:victim" victim-owner 600000
expect_code 201 "the victim's lease"
tok=$(jget token)
sec=$(jget lease_secret)

start=$(date +%s)
"$TN_BIN/tn-auth-storm" --url "$URL" --name "shard:victim" \
    --owner victim-owner --token "$tok" --secret "$sec" \
    --holder-token "$TOK_INDEXER" --other-token "$TOK_OTHER" \
    --reader-token "$TOK_READER" --attempts "${TN_STORM_ATTEMPTS:-100000}" \
    --conns 16 >"$T/storm.out" 2>&1 || {
    cat "$T/storm.out" >&2
    fail "the storm found a way in (or broke the server)"
}
cat "$T/storm.out"
grep -q '^attempts=100000 succeeded=0 ' "$T/storm.out" ||
    [ "${TN_STORM_ATTEMPTS:-100000}" != 100000 ] ||
    fail "storm summary missing"
kill -0 "$SERVER_PID" 2>/dev/null || fail "tenured died during the storm"
echo "storm took $(($(date +%s) - start)) s"

as_get "$TOK_READER" "shard:victim"
expect_code 200 "victim after the storm"
expect_field token "$tok"
expect_field owner_id victim-owner
as_renew "$TOK_INDEXER" "shard:victim" "$tok" "$sec"
expect_code 200 "the holder renews after the storm"
expect_field token "$tok"
as_release "$TOK_INDEXER" "shard:victim" "$tok" "$sec"
expect_code 204 "the holder releases after the storm"
pass "none of the adversarial attempts succeeded; the holder kept its lease"

# Nothing secret reached the log, even at debug level.
for s in "$TOK_INDEXER" "$TOK_OTHER" "$TOK_READER" "$TOK_OPS" "$sec" \
    "$(sec_sha "$TOK_INDEXER")" "not-a-principal-0123456789abcdef"; do
    ! grep -qF -- "$s" "$T/tenured.log" || fail "a token, hash or secret was logged"
done
pass "no token, token hash or lease secret in the log"
