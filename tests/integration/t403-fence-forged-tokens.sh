#!/usr/bin/env bash
# Forged tokens: without proofs a writer stamping a huge token raises the
# mark and locks every honest writer out; with --verify-key the forged
# records are rejected as bad_proof and the honest writer keeps going.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-fence.sh"

"$TN_BIN/tenure-keygen" --help | grep -q -- --signing-key || fail "tenure-keygen --help"
"$TN_BIN/tenure-materializer" --help | grep -q -- --verify-key || fail "tenure-materializer --help"
"$TN_BIN/tenure-materializer" --topic x 2>/dev/null && fail "materializer ran without --brokers"
"$TN_BIN/tenure-keygen" --signing-key "$T/signing.key" --verify-key "$T/verify.key" \
    || fail "tenure-keygen"
[ "$(stat -c %a "$T/signing.key")" = 600 ] || fail "signing key is not mode 0600"
"$TN_BIN/tenure-keygen" --signing-key "$T/signing.key" --verify-key "$T/v2" 2>/dev/null \
    && fail "tenure-keygen overwrote an existing key"
"$TN_BIN/tenure-keygen" --signing-key "$T/other.key" --verify-key "$T/other.pub" || fail "keygen 2"

fence_start_mock raw:1
p() { "$TN_BIN/tn-produce" --brokers "$BROKERS" --topic raw --key shard:8841 "$@" >/dev/null \
    || fail "produce $*"; }
p --token 5 --sign-with "$T/signing.key" --value honest-1
p --token 9007199254740992 --value forged-unsigned
p --token 9007199254740992 --sign-with "$T/other.key" --value forged-other-key
p --token 6 --sign-with "$T/signing.key" --value honest-2
p --token 6 --proof 00 --value bad-proof-format
p --token 7 --sign-with "$T/signing.key" --claim --value claim-7

fence_mat --topic raw --sink "sqlite:$T/signed.db" --verify-key "$T/verify.key" --exit-at-end \
    --metrics-file "$T/metrics.prom" 2>"$T/signed.log" || fail "materializer: $(cat "$T/signed.log")"
S="sqlite:$T/signed.db"
[ "$(fence_sql "$S" "SELECT hwm FROM tenure_fence WHERE resource='shard:8841'")" = 7 ] \
    || fail "with proofs the mark should be 7 (the signed claim)"
got=$(fence_sql "$S" "SELECT group_concat(CAST(value AS TEXT), ',') FROM (SELECT value FROM tenure_admitted ORDER BY \"offset\")")
[ "$got" = "honest-1,honest-2,claim-7" ] || fail "admitted with proofs: $got"
[ "$(fence_sql "$S" "SELECT group_concat(reason) FROM (SELECT reason FROM tenure_rejected ORDER BY \"offset\")")" \
    = "bad_proof,bad_proof,bad_proof" ] || fail "forged records not rejected as bad_proof"
[ "$(fence_sql "$S" "SELECT claim FROM tenure_admitted WHERE \"offset\"=5")" = 1 ] || fail "claim not marked"
grep -q 'tenure_materializer_rejected_total{reason="bad_proof"} 3' "$T/metrics.prom" \
    || fail "metrics do not count bad_proof: $(cat "$T/metrics.prom")"
grep -q 'tenure_materializer_admitted_total 3' "$T/metrics.prom" || fail "metrics admitted"
pass "with --verify-key forged tokens are rejected (bad_proof) and the mark stays honest"

# Negative control: the same topic without proofs shows the lock-out.
fence_mat --topic raw --sink "sqlite:$T/unsigned.db" --exit-at-end 2>"$T/unsigned.log" \
    || fail "materializer (no key)"
U="sqlite:$T/unsigned.db"
[ "$(fence_sql "$U" "SELECT hwm FROM tenure_fence")" = 9007199254740992 ] \
    || fail "control: forged token should have raised the mark"
[ "$(fence_sql "$U" "SELECT count(*) FROM tenure_rejected WHERE reason='stale'")" -ge 2 ] \
    || fail "control: honest writes after the forgery should be stale"
pass "without proofs a forged token locks honest writers out (negative control)"

# A wrong-format verify key is refused at start.
echo nothex >"$T/bad.pub"
fence_mat --topic raw --sink "sqlite:$T/x.db" --verify-key "$T/bad.pub" --exit-at-end 2>/dev/null \
    && fail "materializer accepted a malformed verify key"
pass "malformed verify key refused"
