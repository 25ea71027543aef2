#!/usr/bin/env bash
# tenure run with a signing server (issue 3): the command gets TENURE_PROOF,
# and it is exactly the proof of its grant: the Ed25519 signature of
# "tenure-proof-v1" NUL name NUL token (docs/FENCING.md) made with the
# server's key, recomputed here by openssl from the key file, and valid
# under the verify key; TENURE_TOKEN is the token the server reports for
# the lease.  The lease secret (read from the store's file afterwards) is
# nowhere in the command's environment.  Without signing there is no
# TENURE_PROOF, not even one inherited from tenure run's own environment.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
for b in tenured tenure tenure-keygen tn-json-get; do
    [ -x "$TN_BIN/$b" ] || fail "missing $TN_BIN/$b (build it first)"
done
for t in openssl xxd sqlite3; do
    command -v "$t" >/dev/null || fail "missing $t (Debian packages openssl, xxd, sqlite3)"
done

"$TN_BIN/tenure-keygen" --signing-key "$T/sk" --verify-key "$T/vk" ||
    fail "tenure-keygen failed"
tn_start_server --signing-key "$T/sk"
export TENURE_SERVER=$URL

# ed_message NAME TOKEN FILE: the signed bytes of a grant.
ed_message() { printf 'tenure-proof-v1\0%s\0%s' "$1" "$2" >"$3"; }
# ed_sign NAME TOKEN: the proof openssl makes with the seed of $T/sk
# (RFC 8032 signatures are deterministic: one key, one message, one proof).
ed_sign() {
    ed_message "$1" "$2" "$T/msg"
    { printf '302e020100300506032b657004220420'; head -c 64 "$T/sk"; } |
        xxd -r -p >"$T/sk.der"
    openssl pkeyutl -sign -inkey "$T/sk.der" -keyform DER -rawin \
        -in "$T/msg" -out "$T/sig" 2>"$T/ossl.err" ||
        fail "openssl cannot sign with the key: $(cat "$T/ossl.err")"
    xxd -p -c 256 "$T/sig"
}
# ed_verify NAME TOKEN PROOF: PROOF verifies under $T/vk.
ed_verify() {
    ed_message "$1" "$2" "$T/msg"
    { printf '302a300506032b6570032100'; cat "$T/vk"; } | tr -d '\n' |
        xxd -r -p >"$T/vk.der"
    printf '%s' "$3" | xxd -r -p >"$T/psig"
    openssl pkeyutl -verify -pubin -inkey "$T/vk.der" -keyform DER -rawin \
        -in "$T/msg" -sigfile "$T/psig" >/dev/null 2>&1
}

# The method first, on a proof the server returned itself.
"$TENURE" --json acquire direct:1 --ttl 5s >"$T/acq" || fail "acquire: $(cat "$T/acq")"
BODY=$(cat "$T/acq")
tok=$(jget token)
proof=$(jget proof) || fail "no proof in a signed acquire: $BODY"
[ "$(ed_sign direct:1 "$tok")" = "$proof" ] ||
    fail "openssl's proof of direct:1/$tok differs from the server's: $proof"
ed_verify direct:1 "$tok" "$proof" || fail "the server's proof does not verify"
ed_verify direct:1 "$((tok + 1))" "$proof" && fail "a proof verified for another token"
pass "proofs recomputed with openssl equal the server's"

# tenure run: the command records its environment (as exec'd) and asks
# the server about its lease while it holds it.
"$TENURE" run run:p --ttl 3s -- sh -c '
    cat /proc/$$/environ > "$0/env"
    printf %s "$TENURE_PROOF" > "$0/proof"
    printf %s "$TENURE_TOKEN" > "$0/token"
    "$1" --json get run:p > "$0/get"' "$T" "$TENURE" ||
    fail "tenure run failed"
proof=$(cat "$T/proof")
tok=$(cat "$T/token")
[ -n "$proof" ] || fail "TENURE_PROOF empty or unset"
[[ $proof =~ ^[0-9a-f]{128}$ ]] || fail "TENURE_PROOF is not 128 hex digits: $proof"
BODY=$(cat "$T/get")
expect_field token "$tok" "TENURE_TOKEN against the server's lease"
expect_field name run:p "the server's lease"
[ "$(ed_sign run:p "$tok")" = "$proof" ] ||
    fail "TENURE_PROOF is not the proof of run:p token $tok: $proof"
ed_verify run:p "$tok" "$proof" || fail "TENURE_PROOF does not verify under the verify key"
tr '\0' '\n' <"$T/env" >"$T/env.txt"
grep -qx "TENURE_PROOF=$proof" "$T/env.txt" || fail "TENURE_PROOF not in the exec'd environment"
pass "TENURE_PROOF is the proof of the run's grant (token $tok)"

# The secret of that grant, from the store's file (the server holds it
# exclusively while it runs): nowhere in the command's environment.
rc=0
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || rc=$?
[ "$rc" = 0 ] || fail "tenured exited $rc after SIGTERM"
secret=$(sqlite3 "$T/data/tenure.db" \
    "SELECT lower(hex(secret)) FROM leases WHERE name = 'run:p' AND token = $tok") ||
    fail "cannot read the store file"
[[ $secret =~ ^[0-9a-f]{32}$ ]] || fail "no secret for run:p/$tok in the store: '$secret'"
if grep -qi -- "$secret" "$T/env.txt"; then
    fail "the lease secret is in the command's environment"
fi
if grep -qi '^TENURE_SECRET=\|^TENURE_LEASE_SECRET=' "$T/env.txt"; then
    fail "a secret variable is in the command's environment: $(grep -i secret "$T/env.txt")"
fi
pass "the lease secret is not in the command's environment"

# Without signing: no TENURE_PROOF, even when tenure run's caller has one.
PORT=
tn_start_server
export TENURE_SERVER=$URL
TENURE_PROOF=inherited "$TENURE" run run:u --ttl 2s -- sh -c \
    'cat /proc/$$/environ > "$0/env-u"' "$T" || fail "unsigned tenure run failed"
if tr '\0' '\n' <"$T/env-u" | grep -q '^TENURE_PROOF='; then
    fail "TENURE_PROOF set without signing: $(tr '\0' '\n' <"$T/env-u" | grep '^TENURE_PROOF=')"
fi
tr '\0' '\n' <"$T/env-u" | grep -q '^TENURE_TOKEN=[0-9]' || fail "no TENURE_TOKEN without signing"
pass "no TENURE_PROOF when the server does not sign"
