#!/usr/bin/env bash
# Crash-replay determinism: a materializer killed with kill -9 at random
# moments and restarted each time ends with exactly the sink tables of one
# uninterrupted run (marks, offsets, admitted and rejected rows).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-fence.sh"

fence_start_mock raw:3
"$TN_BIN/tn-produce" --brokers "$BROKERS" --topic raw --gen 42 --count 1000 >"$T/produced" \
    || fail "producing the test records"
[ "$(wc -l <"$T/produced")" = 1000 ] || fail "expected 1000 records produced"

fence_mat --topic raw --sink "sqlite:$T/clean.db" --exit-at-end 2>"$T/clean.log" \
    || fail "uninterrupted run failed: $(cat "$T/clean.log")"
fence_dump "sqlite:$T/clean.db" >"$T/clean.dump"
[ "$(fence_committed "sqlite:$T/clean.db" raw)" = 1000 ] || fail "clean run did not reach the end"
grep -q '|stale$' "$T/clean.dump" || fail "test data has no stale records"
grep -q '|bad_token$' "$T/clean.dump" || fail "test data has no malformed tokens"

seed=${TN_CRASH_SEED:-$RANDOM}
echo "crash loop seed $seed (rerun with TN_CRASH_SEED=$seed)"
RANDOM=$seed
kills=0
done_=0
progress=""
for round in $(seq 1 15); do
    before=$(fence_committed "sqlite:$T/crash.db" raw)
    target=$((before + RANDOM % 90))
    fence_mat_bg "$T/crash.log" --topic raw --sink "sqlite:$T/crash.db" --exit-at-end \
        --batch 3 --batch-wait-ms 0
    pid=$MAT_PID
    # Kill at a random point of progress, plus a random few milliseconds,
    # so kills land before, inside and after sink transactions.
    for _ in $(seq 1 400); do
        [ "$(fence_committed "sqlite:$T/crash.db" raw)" -ge "$target" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.005
    done
    sleep "0.00$((RANDOM % 10))"
    if kill -9 "$pid" 2>/dev/null; then
        kills=$((kills + 1))
        wait "$pid" 2>/dev/null || true
        progress="$progress $(fence_committed "sqlite:$T/crash.db" raw)"
    else
        wait "$pid" || fail "materializer failed in round $round: $(tail -3 "$T/crash.log")"
        done_=1
        break
    fi
done
echo "killed $kills times at random moments; records committed at each kill:$progress"
[ "$kills" -ge 1 ] || fail "the loop never killed the materializer"
if [ "$done_" = 0 ]; then
    fence_mat --topic raw --sink "sqlite:$T/crash.db" --exit-at-end --batch 7 2>>"$T/crash.log" \
        || fail "final restart failed: $(tail -3 "$T/crash.log")"
fi
fence_dump "sqlite:$T/crash.db" >"$T/crash.dump"
diff "$T/clean.dump" "$T/crash.dump" >"$T/diff" || { head -20 "$T/diff"; fail "sink after kill -9 differs from an uninterrupted run"; }
pass "after $kills kill -9s the sink equals the uninterrupted run ($(wc -l <"$T/clean.dump") rows)"

# SIGTERM at random moments: each stop is clean (exit 0, the batch in hand
# committed or not at all) and the result is again the same.
terms=0
for round in $(seq 1 8); do
    log="$T/term.$round.log"
    fence_mat_bg "$log" --topic raw --sink "sqlite:$T/term.db" --batch 3 --batch-wait-ms 0
    # Before "started" the process may not have its handler yet.
    for _ in $(seq 1 200); do grep -q started "$log" && break; sleep 0.01; done
    sleep "0.0$((RANDOM % 10))$((RANDOM % 10))"
    kill -TERM "$MAT_PID"
    rc=0
    wait "$MAT_PID" || rc=$?
    [ "$rc" = 0 ] || fail "SIGTERM in round $round: exit $rc: $(tail -3 "$log")"
    terms=$((terms + 1))
done
fence_mat --topic raw --sink "sqlite:$T/term.db" --exit-at-end 2>"$T/term.log" || fail "run after SIGTERMs"
fence_dump "sqlite:$T/term.db" | diff -q "$T/clean.dump" - >/dev/null || fail "sink after SIGTERMs differs"
pass "$terms SIGTERMs at random moments each exit 0 and the result is the same"

# A batch size of one record per transaction gives the same tables too.
fence_mat --topic raw --sink "sqlite:$T/one.db" --exit-at-end --batch 1 2>"$T/one.log" \
    || fail "batch-1 run failed"
fence_dump "sqlite:$T/one.db" | diff -q "$T/clean.dump" - >/dev/null || fail "batch size changed the result"
pass "batch size does not change the result"
