#!/usr/bin/env bash
# Sessions from the shell: tenure session open|renew|end|get|list, tenure
# claim and tenure release --session, their output (plain and --json),
# their exit codes (0 done, 3 some held, 4 lost, 5 not found, 1 error such
# as a wrong secret, 2 usage) and $TENURE_SESSION_SECRET.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
tn_start_server
need_sessions
export TENURE_SERVER=$URL

# Usage errors come before any request.
expect_exit 2 "open without --ttl" "$TENURE" session open
expect_exit 2 "an unknown verb" "$TENURE" session frob
expect_exit 2 "renew without an id" "$TENURE" session renew --secret x
expect_exit 2 "claim without a session" "$TENURE" claim cli:a
expect_exit 2 "release --session without NAME=TOKEN" \
    "$TENURE" release --session 0123 --secret x cli:a
grep -q 'NAME=TOKEN' "$T/err" || fail "usage line: $(cat "$T/err")"

BODY=$("$TENURE" --json session open --ttl 30s --owner cli/w1) || fail "open: $BODY"
sid=$(jget session_id)
sec=$(jget session_secret)
expect_field owner_id cli/w1 "open"
expect_field ttl_ms 30000 "open"
"$TENURE" session open --ttl 5s --owner cli/w2 >"$T/open2" || fail "open (plain)"
grep -q '^session_id: [0-9a-f]\{32\}$' "$T/open2" || fail "plain open: $(cat "$T/open2")"
grep -q '^secret: ' "$T/open2" || fail "plain open: $(cat "$T/open2")"

expect_exit 0 "get" "$TENURE" session get "$sid"
grep -q '^leases: *0$' "$T/out" || fail "get: $(cat "$T/out")"

# claim: all granted (0), some held (3).
expect_exit 0 "claim" "$TENURE" claim --session "$sid" --secret "$sec" cli:a cli:b
grep -q '^granted cli:a token=[0-9]* secret=[0-9a-f]*$' "$T/out" || fail "claim: $(cat "$T/out")"
ta=$(sed -n 's/^granted cli:a token=\([0-9]*\) .*/\1/p' "$T/out")
"$TENURE" acquire cli:c --ttl 30s --owner other >/dev/null || fail "acquire cli:c"
expect_exit 3 "a claim with a held name" env TENURE_SESSION_SECRET="$sec" \
    "$TENURE" --json claim --session "$sid" cli:c cli:d
BODY=$(grep '"cli:c"' "$T/out")
expect_field status held "cli:c"
BODY=$(grep '"cli:d"' "$T/out")
expect_field status granted "cli:d"
td=$(jget token)

expect_exit 0 "list" "$TENURE" session list --prefix cli/
grep -q "^$sid .* 3  cli/w1$" "$T/out" || fail "list: $(cat "$T/out")"
[ "$("$TENURE" --json session list --prefix cli/ | wc -l)" = 2 ] || fail "two sessions under cli/"

expect_exit 0 "renew" "$TENURE" session renew "$sid" --secret "$sec" --ttl 20s
BODY=$("$TENURE" --json session get "$sid")
expect_field ttl_ms 20000 "renewed with a new TTL"
expect_exit 1 "renew with a wrong secret" "$TENURE" session renew "$sid" --secret 00000000000000000000000000000000
grep -q -i forbidden "$T/err" || fail "wrong secret: $(cat "$T/err")"

# release --session: released (0), then lost (4).
expect_exit 0 "release --session" "$TENURE" release --session "$sid" --secret "$sec" "cli:a=$ta"
grep -q "^released cli:a token=$ta$" "$T/out" || fail "release: $(cat "$T/out")"
expect_exit 5 "cli:a is free" "$TENURE" get cli:a
expect_exit 4 "released twice" "$TENURE" release --session "$sid" --secret "$sec" "cli:a=$ta" "cli:d=$td"
grep -q "^lost cli:a token=$ta$" "$T/out" || fail "release: $(cat "$T/out")"
grep -q "^released cli:d token=$td$" "$T/out" || fail "release: $(cat "$T/out")"

# end: the session and its leases; afterwards lost (4) and not found (5).
expect_exit 0 "end" "$TENURE" session end "$sid" --secret "$sec"
expect_exit 5 "cli:b ended with its session" "$TENURE" get cli:b
expect_exit 5 "the session is gone" "$TENURE" session get "$sid"
expect_exit 4 "renew after the end" "$TENURE" session renew "$sid" --secret "$sec"
expect_exit 4 "claim after the end" "$TENURE" claim --session "$sid" --secret "$sec" cli:e

# An admin force end (no --auth-file here: everyone is admin).
sid2=$(sed -n 's/^session_id: //p' "$T/open2")
sec2=$(sed -n 's/^secret: *//p' "$T/open2")
expect_exit 0 "claim under the second" "$TENURE" claim --session "$sid2" --secret "$sec2" cli:f
expect_exit 0 "force end" "$TENURE" session end "$sid2" --force
expect_exit 5 "cli:f was revoked" "$TENURE" get cli:f
pass "tenure session, claim and release --session: output, JSON and exit codes"
