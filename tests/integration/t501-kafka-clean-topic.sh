#!/usr/bin/env bash
# --clean-topic and --dlq-topic: every admitted record is republished to
# the clean topic (same key, value and headers, plus tenure-source), every
# rejected one to the dead-letter topic with its reason.  A new consumer
# group that fences the clean topic admits all of it and reaches the same
# marks.  Killed mid-way, republishing is at least once: duplicates carry
# the same tenure-source, nothing admitted is missing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-fence.sh"

fence_start_mock raw:3 clean:3 dlq:1 clean2:3
"$TN_BIN/tn-produce" --brokers "$BROKERS" --topic raw --gen 11 --count 300 >/dev/null || fail produce
S="sqlite:$T/sink.db"
fence_mat --topic raw --sink "$S" --clean-topic clean --dlq-topic dlq --exit-at-end \
    2>"$T/mat.log" || fail "materializer: $(tail -3 "$T/mat.log")"

consume() { kcat -C -b "$BROKERS" -t "$1" -e -q -f '%h\n' 2>/dev/null; }
src_of() { sed -n 's/.*tenure-source=\([^,]*\).*/\1/p'; }
admitted=$(fence_sql "$S" "SELECT topic || '/' || \"partition\" || '/' || \"offset\" FROM tenure_admitted" | sort)
rejected=$(fence_sql "$S" "SELECT topic || '/' || \"partition\" || '/' || \"offset\" || ' ' || reason FROM tenure_rejected" | sort)
consume clean >"$T/clean.hdrs"
consume dlq >"$T/dlq.hdrs"
[ "$(src_of <"$T/clean.hdrs" | sort)" = "$admitted" ] || fail "clean topic is not exactly the admitted records"
[ "$(sed -n 's/.*tenure-source=\([^,]*\).*tenure-reject-reason=\([a-z_]*\).*/\1 \2/p' "$T/dlq.hdrs" | sort)" = "$rejected" ] \
    || fail "dead-letter topic is not exactly the rejected records with reasons"
grep -q 'lease-token=' "$T/clean.hdrs" || fail "republished records lost their lease headers"
pass "clean topic = admitted ($(echo "$admitted" | wc -l)), dead-letter topic = rejected ($(echo "$rejected" | wc -l)) with reasons"

fence_mat --topic clean --sink "sqlite:$T/downstream.db" --exit-at-end 2>/dev/null || fail "downstream"
[ "$(fence_sql "sqlite:$T/downstream.db" "SELECT count(*) FROM tenure_rejected")" = 0 ] \
    || fail "fencing the clean topic rejected something"
diff <(fence_sql "$S" "SELECT resource, hwm FROM tenure_fence ORDER BY 1") \
    <(fence_sql "sqlite:$T/downstream.db" "SELECT resource, hwm FROM tenure_fence ORDER BY 1") \
    || fail "downstream marks differ"
pass "a new consumer group fencing the clean topic admits everything and reaches the same marks"

# At least once under kill -9.
for round in $(seq 1 6); do
    fence_mat_bg "$T/crash.log" --topic raw --sink "sqlite:$T/crash.db" --clean-topic clean2 \
        --exit-at-end --batch 5 --batch-wait-ms 0
    sleep "0.$((RANDOM % 3))$((RANDOM % 10))"
    kill -9 "$MAT_PID" 2>/dev/null || true
    wait "$MAT_PID" 2>/dev/null || true
done
fence_mat --topic raw --sink "sqlite:$T/crash.db" --clean-topic clean2 --exit-at-end \
    2>>"$T/crash.log" || fail "final run: $(tail -3 "$T/crash.log")"
consume clean2 >"$T/clean2.hdrs"
[ "$(src_of <"$T/clean2.hdrs" | sort -u)" = "$admitted" ] \
    || fail "after kill -9 the clean topic misses admitted records (or has extra ones)"
pass "after kill -9 the clean topic holds every admitted record at least once ($(wc -l <"$T/clean2.hdrs") records, $(echo "$admitted" | wc -l) distinct)"
