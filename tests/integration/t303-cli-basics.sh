#!/usr/bin/env bash
# The CLI's commands and exit codes: acquire prints the secret that renew
# and release from another invocation need; 3 held, 4 lost / not current,
# 5 not found, 2 usage; --json output; --help everywhere; TENURE_SERVER;
# failover to a second URL when the first refuses connections.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
tn_start_server
export TENURE_SERVER=$URL

# --help on every command, usage errors are 2.
for c in "" acquire renew release get list check run watch migrate; do
    "$TENURE" $c --help >"$T/help" || fail "tenure $c --help failed"
    grep -q 'Usage: tenure' "$T/help" || fail "tenure $c --help: no usage"
done
grep -q '4  lost' <("$TENURE" --help) || fail "exit codes missing from --help"
expect_exit 2 "no command" "$TENURE"
expect_exit 2 "unknown command" "$TENURE" frobnicate
expect_exit 2 "acquire without ttl" "$TENURE" acquire cli:1
expect_exit 2 "bad duration" "$TENURE" acquire cli:1 --ttl 10parsecs
expect_exit 2 "renew without secret" env -u TENURE_SECRET "$TENURE" renew cli:1 --token 1
expect_exit 2 "run without command" "$TENURE" run cli:1 --ttl 1s
pass "help and usage errors"

# acquire (human), then held (3) for a second owner.
"$TENURE" acquire cli:1 --ttl 30s --owner alice >"$T/acq" || fail "acquire: $(cat "$T/acq")"
tok=$(sed -n 's/^token: *//p' "$T/acq")
sec=$(sed -n 's/^secret: *//p' "$T/acq")
[ -n "$tok" ] && [ ${#sec} -ge 32 ] || fail "acquire output lacks token/secret: $(cat "$T/acq")"
expect_exit 3 "acquire of a held name" "$TENURE" acquire cli:1 --ttl 5s --owner bob
grep -q alice "$T/err" || fail "held message lacks the holder: $(cat "$T/err")"
expect_exit 3 "json acquire of a held name" "$TENURE" --json acquire cli:1 --ttl 5s
BODY=$(cat "$T/out"); expect_field error held "held json"; expect_field holder.token "$tok" "holder"

# get, list, check.
"$TENURE" --json get cli:1 >"$T/get" || fail "get"
BODY=$(cat "$T/get"); expect_field token "$tok" "get"; expect_field owner_id alice "get"
expect_exit 5 "get of a free name" "$TENURE" get cli:free
"$TENURE" --json list --prefix cli: >"$T/list" || fail "list"
BODY=$(head -1 "$T/list"); expect_field name cli:1 "list"
"$TENURE" list >"$T/list2" || fail "human list"
grep -q '^cli:1 ' "$T/list2" || fail "human list lacks cli:1: $(cat "$T/list2")"
expect_exit 0 "check current" "$TENURE" check cli:1 --token "$tok"
grep -Eq '^current: +yes$' "$T/out" || fail "check output: $(cat "$T/out")"
expect_exit 4 "check stale token" "$TENURE" check cli:1 --token $((tok - 1))
pass "acquire, held, get, list, check"

# Names travel as one percent-encoded path segment.
odd='dir/sub name:%41'
"$TENURE" --json acquire "$odd" --ttl 5s >"$T/odd" || fail "acquire of an odd name"
BODY=$(cat "$T/odd"); expect_field name "$odd" "odd name"
"$TENURE" --json get "$odd" >"$T/odd2" || fail "get of an odd name"
BODY=$(cat "$T/odd2"); expect_field name "$odd" "odd name read back"
pass "names with / space and % survive the round trip"

# renew and release from other invocations, with the secret.
expect_exit 1 "renew with a wrong secret" "$TENURE" renew cli:1 --token "$tok" --secret 00ff00ff00ff00ff00ff00ff00ff00ff
expect_exit 0 "renew" "$TENURE" renew cli:1 --token "$tok" --secret "$sec" --ttl 4s
TENURE_SECRET=$sec expect_exit 0 "renew with TENURE_SECRET" "$TENURE" --json renew cli:1 --token "$tok"
BODY=$(cat "$T/out"); expect_field token "$tok" "renew json"
expect_exit 0 "release" "$TENURE" release cli:1 --token "$tok" --secret "$sec"
expect_exit 4 "release again" "$TENURE" release cli:1 --token "$tok" --secret "$sec"
expect_exit 4 "renew after release" "$TENURE" renew cli:1 --token "$tok" --secret "$sec"
expect_exit 5 "get after release" "$TENURE" get cli:1
pass "renew and release with the secret; lost is 4"

# Servers: env, --server (before or after the command), failover.
dead="http://127.0.0.1:$(closed_port)"
expect_exit 1 "only a dead server" "$TENURE" --server "$dead" get cli:1
TENURE_SERVER=$dead expect_exit 5 "--server beats TENURE_SERVER" "$TENURE" get cli:1 --server "$URL"
TENURE_SERVER="$dead,$URL" expect_exit 0 "failover acquire" "$TENURE" --json acquire cli:2 --ttl 5s
BODY=$(cat "$T/out"); t2=$(jget token); s2=$(jget lease_secret)
expect_exit 0 "failover release" "$TENURE" --server "$dead,$URL" release cli:2 --token "$t2" --secret "$s2"
pass "server selection and failover"
