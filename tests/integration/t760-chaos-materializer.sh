#!/usr/bin/env bash
# Chaos, short profile: the materializer killed.  The recording clients
# write stamped records (key = lease name, lease-token header) to a topic
# of the librdkafka mock cluster instead of a local sink; tenure-materializer
# fences them into a SQLite sink and is killed with -9 every 0.3-1.2 s and
# restarted.  After the run a last materializer drains the topic; the
# committed decisions (tenure_admitted / tenure_rejected in offset order)
# become the history's sink lines.  Every produced record must have been
# decided exactly once, and the history must check clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-fence.sh"
. "$(dirname "$0")/lib-chaos.sh"
command -v sqlite3 >/dev/null || fail "sqlite3 (the CLI) is missing"
secs=${TN_CHAOS_SECONDS:-7}
chaos_init materializer
fence_start_mock raw:1
chaos_server
sink="sqlite:$T/mat.db"
fence_mat_bg "$T/mat.log" --topic raw --sink "$sink"
chaos_clients 3 "$secs" --ttl-min 200 --ttl-max 600 --names 3 \
    --brokers "$BROKERS" --topic raw
while chaos_running; do
    chaos_sleep_ms "$(chaos_rand 300 1200)"
    chaos_running || break
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    chaos_note "kill -9 tenure-materializer"
    kill -9 "$MAT_PID" 2>/dev/null || true
    wait "$MAT_PID" 2>/dev/null || true
    chaos_sleep_ms "$(chaos_rand 0 300)"
    fence_mat_bg "$T/mat.log" --topic raw --sink "$sink"
    chaos_note "tenure-materializer restarted"
done
chaos_finish
kill -9 "$MAT_PID" 2>/dev/null || true
wait "$MAT_PID" 2>/dev/null || true
fence_mat --topic raw --sink "$sink" --exit-at-end 2>>"$T/mat.log" ||
    fail "the last materializer failed: $(tail -5 "$T/mat.log")"
produced=$(sed -n 's/.* sink_writes=\([0-9]*\).*/\1/p' "$T/clients.log" | awk '{s += $1} END {print s + 0}')
t=$("$CHAOS" now)
sqlite3 -separator ' ' "$T/mat.db" "
    SELECT \"offset\", resource, token, 'admit' FROM tenure_admitted WHERE topic = 'raw'
    UNION ALL
    SELECT \"offset\", resource, token, 'reject' FROM tenure_rejected WHERE topic = 'raw'
    ORDER BY 1" >"$T/decisions" || fail "cannot read the materializer's sink"
awk -v t="$t" '$3 != "" {printf "{\"t\":%d,\"src\":\"sink\",\"resource\":\"%s\",\"token\":%d,\"decision\":\"%s\"}\n", t, $2, $3, $4}' \
    "$T/decisions" >"$T/h/sink.jsonl"
decided=$(wc -l <"$T/decisions")
[ "$decided" = "$produced" ] ||
    fail "$produced records produced, $decided decided by the materializer"
bad=$(sqlite3 "$T/mat.db" "SELECT count(*) FROM tenure_rejected WHERE reason <> 'stale'")
[ "$bad" = 0 ] || fail "$bad records rejected for another reason than stale"
chaos_check
pass "materializer killed: $produced records decided once each; $CHAOS_SUMMARY, no violation"
