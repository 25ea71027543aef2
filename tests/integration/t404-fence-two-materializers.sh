#!/usr/bin/env bash
# Two materializers started on one sink by mistake: the offsets are
# compare-and-set, so the one that commits second aborts its batch and
# exits 3; nothing is applied twice.  The survivor stops cleanly on
# SIGTERM, and the sink equals an uninterrupted single run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-fence.sh"

fence_start_mock raw:1
S="sqlite:$T/sink.db"
fence_mat_bg "$T/a.log" --topic raw --sink "$S" --batch-wait-ms 0
A=$MAT_PID
fence_mat_bg "$T/b.log" --topic raw --sink "$S" --batch-wait-ms 0
B=$MAT_PID
for i in $(seq 1 100); do
    grep -q started "$T/a.log" && grep -q started "$T/b.log" && break
    sleep 0.05
done
grep -q started "$T/b.log" || fail "second materializer did not start"
"$TN_BIN/tn-produce" --brokers "$BROKERS" --topic raw --gen 7 --count 300 >/dev/null || fail produce
fence_wait_committed "$S" raw 300 || fail "records were not committed"

sleep 0.3 # give the loser time to reach its commit
ra=running rb=running
if ! kill -0 "$A" 2>/dev/null; then ra=0; wait "$A" || ra=$?; fi
if ! kill -0 "$B" 2>/dev/null; then rb=0; wait "$B" || rb=$?; fi
echo "materializer A: $ra, B: $rb"
if [ "$ra" = running ] && [ "$rb" = 3 ]; then survivor=$A
elif [ "$rb" = running ] && [ "$ra" = 3 ]; then survivor=$B
else fail "expected exactly one materializer to exit 3 (A=$ra B=$rb)"; fi
grep -q 'another materializer' "$T/a.log" "$T/b.log" || fail "loser did not say why"
pass "the second writer's compare-and-set failed and it exited 3"

kill -TERM "$survivor"
rc=0
wait "$survivor" || rc=$?
[ "$rc" = 0 ] || fail "survivor did not stop cleanly on SIGTERM (exit $rc)"
pass "SIGTERM stops the materializer with exit 0"

fence_mat --topic raw --sink "sqlite:$T/ref.db" --exit-at-end 2>/dev/null || fail "reference run"
diff <(fence_dump "sqlite:$T/ref.db") <(fence_dump "$S") >"$T/diff" \
    || { head "$T/diff"; fail "sink differs from a single uninterrupted run"; }
pass "the sink equals a single uninterrupted run"
