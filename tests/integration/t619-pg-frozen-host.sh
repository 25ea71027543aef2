#!/usr/bin/env bash
# No instance held hostage by a paused database node (docs/HA.md).  Two
# PostgreSQL nodes, a primary a and its streaming standby b; two tenured
# on connection strings naming both, in both orders (a,b and b,a), each
# probed with an acquire every 50 ms (tests/tools/ha/serve_probe.py).
# Every process of a is stopped (SIGSTOP: a paused machine, whose kernel
# still accepts TCP connections and then answers nothing), b is promoted
# while a stays paused, and each instance must serve again from b while a
# is still paused: before, the one that named a first kept connecting to
# a (libpq's non-blocking connect has no timeout) until a resumed, and its
# LISTEN connection stayed on a for ever.  Prints how long after b became
# writable each instance served (docs/HA.md gives the figures); asserts
# only that both served before a resumed, 20 s later.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_private_primary
pa=$PG_PA pb=$PG_PB
pg_cluster standby "$PGPRIV/b" "$pb" "$pa" tn_b >>"$T/pg.log" 2>&1 ||
    fail "cannot start the standby: $(tail -5 "$T/pg.log")"
hosts_ab="127.0.0.1:$pa,127.0.0.1:$pb"
hosts_ba="127.0.0.1:$pb,127.0.0.1:$pa"
opts="target_session_attrs=read-write&connect_timeout=1"
pg_start_instance 0 "postgresql://postgres@$hosts_ab/postgres?$opts"
pg_start_instance 1 "postgresql://postgres@$hosts_ba/postgres?$opts"

PY=${TN_PYTHON3:-/usr/bin/python3}
PROBE=$TN_SRC/tests/tools/ha/serve_probe.py
"$PY" "$PROBE" run --out "$T/probe.jsonl" --http ab="${URLS[0]}" --http ba="${URLS[1]}" \
    --pg a="host=127.0.0.1 port=$pa user=postgres dbname=postgres" \
    --pg b="host=127.0.0.1 port=$pb user=postgres dbname=postgres" 2>>"$T/probe.log" &
probe=$!
TN_PIDS+=("$probe")
pg_wait_for 10 grep -q '"target": "ba", "ok": true' "$T/probe.jsonl" ||
    fail "the probes never succeeded: $(tail -3 "$T/probe.log")"
sleep 1

t_fault=$("$TN_BIN/tn-chaos" now)
pg_cluster freeze "$PGPRIV/a"
sleep 4 # both instances are now waiting on a
pg_cluster promote "$PGPRIV/b" >>"$T/pg.log" 2>&1 || fail "cannot promote b"
sleep 12
t_end=$("$TN_BIN/tn-chaos" now)
kill "$probe"
wait "$probe" 2>/dev/null || true
"$PY" "$PROBE" delays "$T/probe.jsonl" "$t_fault" --end "$t_end" --on b >"$T/delays" ||
    fail "an instance did not serve while a was paused: $(cat "$T/delays"); $(grep -h 'lost\|stopped answering' "$T"/tenured*.log | tail -4)"
cat "$T/delays"
pg_cluster thaw "$PGPRIV/a"
grep -q 'stopped answering; trying it last' "$T/tenured0.log" ||
    fail "instance a,b did not log the paused host"
pass "a paused first host holds no instance: both served from b while a was paused ($(cat "$T/delays"))"
