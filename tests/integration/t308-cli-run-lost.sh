#!/usr/bin/env bash
# tenure run when the server answers "lost" (here: a server restarted on an
# empty data dir no longer knows the grant): the command gets SIGTERM at
# once, run reports "lost" and exits 4 without retrying.  The 6 s lease
# outlasts a restart of a sanitizer build on a busy machine (2-3 s seen),
# so the renew meets the new server and is told "lost", not "expired".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
tn_start_server

cat >"$T/worker.sh" <<W
trap 'echo term > "$T/term"; exit 0' TERM
while :; do sleep 0.02; done
W
"$TENURE" --server "$URL" run -v lost:1 --ttl 6s --grace 400ms -- bash "$T/worker.sh" \
    >"$T/run.out" 2>"$T/run.err" &
R=$!
TN_CLIENT_PIDS+=("$R")
wait_grep "$T/run.err" 'acquired' 1 5 || fail "no acquire: $(cat "$T/run.err")"
tn_kill_server
TN_PIDS=() # the old server is gone; lib.sh's cleanup fails on dead pids
TN_DATA_DIR=$T/data2 tn_start_server
wait_exit "$R" 10 || fail "run did not stop after the loss: $(cat "$T/run.err")"
[ "$RC" = 4 ] || fail "run exit $RC, expected 4: $(cat "$T/run.err")"
grep -q '"lost:1" lost' "$T/run.err" || fail "no loss message: $(cat "$T/run.err")"
[ -s "$T/term" ] || fail "the command did not get SIGTERM first"
pass "lease lost on the server: command stopped, exit 4"
