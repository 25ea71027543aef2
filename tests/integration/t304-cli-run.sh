#!/usr/bin/env bash
# tenure run: the command sees TENURE_NAME/TENURE_TOKEN, the lease is kept
# past five TTLs while it runs, released when it exits, and run exits with
# the command's status (128+N for signal N, 127 when it cannot start, 3
# when the lease is held).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
tn_start_server
export TENURE_SERVER=$URL

# Environment and exit status; released afterwards.
expect_exit 7 "run exit status" "$TENURE" run run:1 --ttl 2s -- sh -c 'echo "$TENURE_NAME $TENURE_TOKEN"; exit 7'
grep -Eq '^run:1 [0-9]+$' "$T/out" || fail "environment: $(cat "$T/out")"
expect_exit 5 "released after the command exited" "$TENURE" get run:1
pass "environment, exit status, release on exit"

# Kept alive past five TTLs (600 ms) while the command runs 3.3 s; nobody
# else can take it meanwhile.  (A shorter TTL made a loaded machine, which
# can stall a process for a few hundred ms, lose the lease now and then.)
"$TENURE" run -v run:2 --ttl 600ms -- sh -c 'echo "$TENURE_TOKEN" > '"$T/tok"'; sleep 3.3' \
    >"$T/run.out" 2>"$T/run.err" &
R=$!
TN_CLIENT_PIDS+=("$R")
sleep 3.0
[ -s "$T/tok" ] || fail "the command did not start"
expect_exit 3 "other owner while run holds it" "$TENURE" acquire run:2 --ttl 1s
"$TENURE" --json get run:2 >"$T/get" || fail "lease lost while running: $(cat "$T/run.err")"
BODY=$(cat "$T/get"); expect_field token "$(cat "$T/tok")" "same grant"
wait_exit "$R" 10 || fail "run did not exit"
[ "$RC" = 0 ] || fail "run exit $RC: $(cat "$T/run.err")"
n=$(grep -c 'renewed lease' "$T/run.err")
[ "$n" -ge 12 ] || fail "only $n renews in five and a half TTLs"
expect_exit 5 "released after the command" "$TENURE" get run:2
pass "kept alive past five TTLs"

# Held by someone else: 3, the command never starts.
expect_exit 0 "acquire" "$TENURE" acquire run:3 --ttl 5s
expect_exit 3 "run on a held lease" "$TENURE" run run:3 --ttl 1s -- touch "$T/never"
[ ! -e "$T/never" ] || fail "the command ran without the lease"
# Signals and exec failure.
expect_exit 137 "command killed by SIGKILL" "$TENURE" run run:4 --ttl 2s -- sh -c 'kill -9 $$'
expect_exit 127 "command not found" "$TENURE" run run:5 --ttl 2s -- /nonexistent/cmd
expect_exit 5 "released after exec failure" "$TENURE" get run:5
pass "held, signal and exec-failure exit codes"

# SIGTERM to tenure run is forwarded; the lease is released afterwards.
"$TENURE" run run:6 --ttl 2s -- sh -c 'echo $$ > "$0"; trap "exit 42" TERM; while :; do sleep 0.05; done' "$T/pid" &
R=$!
TN_CLIENT_PIDS+=("$R")
sleep 0.5
kill -TERM "$R"
wait_exit "$R" 5 || fail "run did not exit after SIGTERM"
[ "$RC" = 42 ] || fail "forwarded SIGTERM: exit $RC"
expect_exit 5 "released after SIGTERM" "$TENURE" get run:6
pass "SIGTERM forwarded"
