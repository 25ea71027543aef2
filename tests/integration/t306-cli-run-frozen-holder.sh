#!/usr/bin/env bash
# tenure run frozen with SIGSTOP past its TTL while another process takes
# the lease, then resumed: it kills its command at once, without another
# renew succeeding, exits 4, and leaves the new holder's grant alone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
tn_start_server
export TENURE_SERVER=$URL
TTL=500

cat >"$T/worker.sh" <<W
echo \$\$ > "$T/pid"
while :; do "$PROBE" mono >> "$T/beats"; sleep 0.02; done
W
"$TENURE" run -v zombie:1 --ttl ${TTL}ms --grace 100ms -- bash "$T/worker.sh" \
    >"$T/run.out" 2>"$T/run.err" &
R=$!
TN_CLIENT_PIDS+=("$R")
wait_grep "$T/run.err" 'renewed lease' 2 5 || fail "no renews: $(cat "$T/run.err")"
kill -STOP "$R"
# Another process takes the lease once it has expired on the server.
got=""
for _ in $(seq 1 150); do
    if "$TENURE" --json acquire zombie:1 --ttl 10s --owner other >"$T/acq" 2>/dev/null; then
        got=1; break
    fi
    sleep 0.02
done
[ -n "$got" ] || { kill -CONT "$R"; fail "nobody could take the lease while run was frozen"; }
BODY=$(cat "$T/acq"); other=$(jget token)
renews=$(grep -c 'renewed lease' "$T/run.err")
t_cont=$(mono)
kill -CONT "$R"
wait_exit "$R" 5 || fail "run did not exit after SIGCONT"
[ "$RC" = 4 ] || fail "run exit $RC, expected 4: $(cat "$T/run.err")"
gone "$(cat "$T/pid")" || fail "the command survived"
last=$(tail -1 "$T/beats")
[ "$last" -lt $((t_cont + 300)) ] || fail "the command ran until $last, $((last - t_cont)) ms after SIGCONT"
[ "$(grep -c 'renewed lease' "$T/run.err")" = "$renews" ] || fail "a renew succeeded after SIGCONT: $(cat "$T/run.err")"
grep -q 'expired' "$T/run.err" || fail "no expiry message: $(cat "$T/run.err")"
"$TENURE" --json get zombie:1 >"$T/get" || fail "the new holder's lease is gone"
BODY=$(cat "$T/get"); expect_field token "$other" "new holder untouched"
pass "frozen holder killed its command $((last - t_cont)) ms after SIGCONT, no renew"
