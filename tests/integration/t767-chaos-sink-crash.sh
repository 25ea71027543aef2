#!/usr/bin/env bash
# Chaos, short profile: the sink writers crash.  Client processes (each a
# sink writer with its own SQLite connection) are killed with -9 at random,
# often in the middle of a sink transaction, and replaced by new ones; on
# top, 10% of the sink transactions are rolled back on purpose after the
# fence check (a write that failed).  Only committed decisions are in the
# history; the mark replayed from them must match every hwm_before the sink
# reports, and the whole history must check clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-chaos.sh"
secs=${TN_CHAOS_SECONDS:-6}
chaos_init sink-crash
chaos_server
args=(--ttl-min 200 --ttl-max 800 --names 3 --abort-pct 10)
chaos_clients 3 "$secs" "${args[@]}"
start=$(date +%s)
gen=0
while [ $(($(date +%s) - start)) -lt "$secs" ]; do
    chaos_sleep_ms "$(chaos_rand 300 900)"
    i=$(($(chaos_rand 1 ${#CHAOS_CLIENT_PIDS[@]}) - 1))
    p=${CHAOS_CLIENT_PIDS[$i]}
    kill -0 "$p" 2>/dev/null || continue
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    chaos_note "kill -9 sink writer pid $p"
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
    gen=$((gen + 1))
    left=$((secs - ($(date +%s) - start)))
    [ "$left" -ge 1 ] || left=1
    "$CHAOS" client --url "$URL" --out "$T/h/r$gen.jsonl" --sink "$T/sink.db" \
        --proc "r$gen" --duration-ms $((left * 1000)) \
        --seed $((CHAOS_SEED * 37 + gen)) "${args[@]}" ${TN_CHAOS_CLIENT_ARGS:-} \
        2>>"$T/clients.log" &
    CHAOS_CLIENT_PIDS[$i]=$!
    TN_PIDS+=($!)
    chaos_note "sink writer r$gen started"
done
chaos_finish
chaos_check
pass "sink writers killed: $CHAOS_SUMMARY, no violation"
