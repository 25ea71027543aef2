#!/usr/bin/env bash
# tenure run when the server stops answering (SIGSTOP): the command, which
# ignores SIGTERM, is killed before the lease could have been granted to
# anyone else (last successful renew sent + TTL <= freeze + TTL), with
# nothing of its process group left, and run exits 4.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
tn_start_server
TTL=1000

cat >"$T/worker.sh" <<W
trap '' TERM
echo \$\$ > "$T/pid"
sleep 1000 &
echo \$! > "$T/grandchild"
while :; do "$PROBE" mono >> "$T/beats"; sleep 0.02; done
W
"$TENURE" --server "$URL" run -v frozen:run --ttl ${TTL}ms --grace 200ms -- bash "$T/worker.sh" \
    >"$T/run.out" 2>"$T/run.err" &
R=$!
TN_CLIENT_PIDS+=("$R")
wait_grep "$T/run.err" 'renewed lease' 2 5 || fail "no renews: $(cat "$T/run.err")"
t_stop=$(mono)
kill -STOP "$SERVER_PID"
wait_exit "$R" 5 || { kill -CONT "$SERVER_PID"; fail "run did not stop the command"; }
kill -CONT "$SERVER_PID"
[ "$RC" = 4 ] || fail "run exit $RC, expected 4: $(cat "$T/run.err")"
grep -q 'expired' "$T/run.err" || fail "no expiry message: $(cat "$T/run.err")"
last=$(tail -1 "$T/beats")
[ "$last" -lt $((t_stop + TTL)) ] || fail "the command ran at $last, past $((t_stop + TTL)) (freeze at $t_stop)"
gone "$(cat "$T/pid")" || fail "the command survived"
gone "$(cat "$T/grandchild")" || fail "a process of the command's group survived"
pass "server frozen: command killed $((last - t_stop)) ms after the freeze (TTL $TTL)"
