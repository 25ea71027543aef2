#!/usr/bin/env bash
# What a newcomer runs into in the first hour with the CLI, each case once:
# a duration without a unit is a usage error naming the units (exit 2), and
# --ttl 0 says why; an option without its value says so; an unknown option
# is one line on stderr; --server takes host:port; --bearer is the bearer
# token and --token only ever a fencing token; `check NAME T` positional,
# with the token asked about and the live token labelled apart; a --wait
# that runs out says the wait ended; `release --force`; `list --json` is
# one object per line; `run -v` says nothing about renews after it
# released the lease.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-security.sh"
sec_write_auth "$T/auth.json"
tn_start_server --auth-file "$T/auth.json"
export TENURE_SERVER="127.0.0.1:$PORT" # host:port, http:// implied
export TENURE_AUTH_TOKEN=$TOK_INDEXER

# one_line DESC PATTERN: the last command wrote exactly one line on stderr,
# matching PATTERN, and nothing on stdout.
one_line() {
    [ "$(wc -l <"$T/err")" = 1 ] || fail "$1: expected one stderr line, got: $(cat "$T/err")"
    grep -Eq -- "$2" "$T/err" || fail "$1: stderr lacks /$2/: $(cat "$T/err")"
    [ ! -s "$T/out" ] || fail "$1: unexpected stdout: $(cat "$T/out")"
}

expect_exit 2 "--ttl without a unit" "$TENURE" acquire shard:1 --ttl 10
one_line "--ttl 10" 'ms, s, m or h'
expect_exit 2 "--wait without a unit" "$TENURE" acquire shard:1 --ttl 10s --wait 15
one_line "--wait 15" "--wait: .*unit.*'15'"
expect_exit 2 "run --ttl without a unit" "$TENURE" run shard:1 --ttl 10 -- true
one_line "run --ttl 10" 'ms, s, m or h'
expect_exit 2 "--timeout without a unit" "$TENURE" --timeout 5 get shard:1
one_line "--timeout 5" 'ms, s, m or h'
expect_exit 2 "--ttl 0" "$TENURE" acquire shard:1 --ttl 0
one_line "--ttl 0" '--ttl: .*more than 0'
expect_exit 2 "--ttl without a name" "$TENURE" acquire --ttl 5s
one_line "no name" 'lease name is required'
expect_exit 2 "watch --prefix without its value" "$TENURE" watch --prefix
one_line "watch --prefix" '--prefix: needs a value'
expect_exit 2 "unknown option of a command" "$TENURE" acquire shard:1 --ttl 5s --frob
one_line "unknown command option" '--frob: unknown option'
expect_exit 2 "unknown global option" "$TENURE" --frob get shard:1
one_line "unknown global option" '--frob: unknown option'
expect_exit 2 "unknown command" "$TENURE" frobnicate
one_line "unknown command" 'unknown command "frobnicate"'
expect_exit 5 "--server http:// is still taken" "$TENURE" --server "$URL" get shard:free
pass "usage errors: units, --ttl 0, missing values, one line each; host:port"

# --bearer, one meaning per flag: --token is never the bearer token.
expect_exit 2 "--token before the command" "$TENURE" --token "$TOK_OPS" get shard:1
one_line "--token before the command" 'bearer token is --bearer'
expect_exit 2 "--token after get" "$TENURE" get shard:1 --token "$TOK_OPS"
one_line "--token after get" 'bearer token is --bearer'
expect_exit 0 "acquire with TENURE_AUTH_TOKEN" "$TENURE" --json acquire shard:8841 --ttl 30s --owner indexer-17
BODY=$(cat "$T/out"); tok=$(jget token); sec=$(jget lease_secret)
TENURE_AUTH_TOKEN= expect_exit 1 "no bearer token" "$TENURE" get shard:8841
expect_exit 0 "--bearer before the command" env -u TENURE_AUTH_TOKEN "$TENURE" --bearer "$TOK_READER" get shard:8841
expect_exit 0 "--bearer after the command" env -u TENURE_AUTH_TOKEN "$TENURE" check shard:8841 --token "$tok" --bearer "$TOK_READER"
pass "--bearer is the bearer token, --token a fencing token"

# check: positional token; asked and live token labelled apart.
expect_exit 4 "check NAME T (stale)" "$TENURE" check shard:8841 $((tok + 3))
grep -Eq "^token: +$((tok + 3))$" "$T/out" || fail "check shows the token asked about: $(cat "$T/out")"
grep -Eq '^current: +no$' "$T/out" || fail "check current: $(cat "$T/out")"
grep -Eq "^live token: +$tok$" "$T/out" || fail "check live token: $(cat "$T/out")"
expect_exit 4 "check --name --token (stale)" "$TENURE" --json check --name shard:8841 --token $((tok + 3))
BODY=$(cat "$T/out"); expect_field token $((tok + 3)) "check json asked"
expect_field live_token "$tok" "check json live"; expect_field current false "check json"
expect_exit 0 "check NAME T (current)" "$TENURE" check shard:8841 "$tok"
grep -Eq '^current: +yes$' "$T/out" || fail "check current: $(cat "$T/out")"
expect_exit 2 "check NAME T extra" "$TENURE" check shard:8841 "$tok" 9
pass "check NAME T, asked and live token labelled apart"

# A --wait that runs out says the wait ended.
expect_exit 3 "acquire --wait runs out" "$TENURE" acquire shard:8841 --ttl 5s --owner indexer-04 --wait 300ms
one_line "wait ran out" 'wait of 300 ms ended: lease is still held by "indexer-17"'
expect_exit 3 "acquire without --wait" "$TENURE" acquire shard:8841 --ttl 5s --owner indexer-04
grep -q 'wait' "$T/err" && fail "no --wait, yet the message speaks of one: $(cat "$T/err")"
expect_exit 3 "run --wait runs out" "$TENURE" run shard:8841 --ttl 5s --wait 300ms -- true
grep -q 'wait ended' "$T/err" || fail "run: $(cat "$T/err")"
pass "a --wait that runs out says so"

# release --force: an admin ends whatever grant is live.
expect_exit 2 "--force with a token" "$TENURE" release shard:8841 --force --token "$tok"
expect_exit 1 "--force by a non-admin" "$TENURE" release shard:8841 --force
grep -q forbidden "$T/err" || fail "non-admin force: $(cat "$T/err")"
expect_exit 0 "held after the refused force" "$TENURE" get shard:8841
expect_exit 0 "--force by an admin" "$TENURE" --bearer "$TOK_OPS" release shard:8841 --force
expect_exit 5 "free after the force release" "$TENURE" get shard:8841
expect_exit 4 "--force of a free name" "$TENURE" --bearer "$TOK_OPS" release shard:8841 --force
expect_exit 4 "the old holder lost it" "$TENURE" renew shard:8841 --token "$tok" --secret "$sec"
expect_exit 0 "next grant" "$TENURE" --json acquire shard:8841 --ttl 30s
BODY=$(cat "$T/out"); [ "$(jget token)" -gt "$tok" ] || fail "token after force release: $BODY"
areq "$TOK_OPS" GET /v1/leases/shard:8841/history
grep -q '"revoked"' <<<"$BODY" || fail "history lacks the revocation: $BODY"
pass "release --force"

# list --json: one object per line, as --help says.
for n in 1 2 3; do "$TENURE" acquire "shard:l$n" --ttl 30s >/dev/null || fail "acquire l$n"; done
expect_exit 0 "list --json" "$TENURE" --json list --prefix shard:l
[ "$(wc -l <"$T/out")" = 3 ] || fail "list --json: expected 3 lines: $(cat "$T/out")"
i=0
while read -r line; do
    i=$((i + 1)); BODY=$line; expect_field name "shard:l$i" "list line $i"
done <"$T/out"
expect_exit 0 "list --json --limit" "$TENURE" --json list --prefix shard:l --limit 2
[ "$(wc -l <"$T/out")" = 3 ] || fail "list --limit 2: $(cat "$T/out")"
BODY=$(sed -n 3p "$T/out"); expect_field next shard:l2 "list next"
"$TENURE" list --help | grep -q 'one object' || fail "list --help does not say one object per line"
pass "list --json prints one object per line"

# run -v after a normal exit: no word about a renew answered after the
# lease ended.  The command freezes tenured (SIGSTOP) before the first
# renew (at a third of the 3 s TTL) and exits at 1.5 s, while that renew
# hangs; run then releases, and tenured, thawed from here 2 s after run
# started, answers the renew after the release began.
(sleep 2; kill -CONT "$SERVER_PID") &
thaw=$!
"$TENURE" run -v shard:r1 --ttl 3s -- sh -c 'kill -STOP '"$SERVER_PID"'; sleep 1.5' \
    >"$T/run.out" 2>"$T/run.err" || fail "run: $(cat "$T/run.err")"
wait "$thaw"
grep -q 'renewed lease\|renew of lease .* failed' "$T/run.err" && fail "a renew was answered before the release: $(cat "$T/run.err")"
grep -q 'answered after' "$T/run.err" && fail "run -v: $(cat "$T/run.err")"
grep -q 'released "shard:r1"' "$T/run.err" || fail "run -v: no release line: $(cat "$T/run.err")"
expect_exit 5 "released" "$TENURE" get shard:r1
pass "run -v is quiet about a renew answered after its own release"
