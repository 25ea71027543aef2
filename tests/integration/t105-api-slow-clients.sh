#!/usr/bin/env bash
# A connection limit and a whole-request timeout: idle connections, clients
# that drip a request a byte at a time, and a flood of connections over the
# limit do not stop a well-behaved client from getting answers, and the
# server ends the misbehaving connections within the timeout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools

MAX_CONNS=8
TIMEOUT_MS=1000
SLACK_MS=${SLACK_MS:-1200}
# The help is read whole first: `--help | grep -q` under pipefail fails
# when grep exits before tenured has written its last line.
help=$("$TN_BIN/tenured" --help 2>&1) || fail "tenured --help exited $?"
grep -q -- --max-connections <<<"$help" ||
    fail "tenured --help does not list --max-connections"
grep -q -- --request-timeout-ms <<<"$help" ||
    fail "tenured --help does not list --request-timeout-ms"
tn_start_server --max-connections "$MAX_CONNS" --request-timeout-ms "$TIMEOUT_MS"

# served_within MS WHAT: a fresh client gets a 201 for an acquire within MS.
served_within() {
    local deadline=$(($(now_ms) + $1)) n=0 code
    while [ "$(now_ms)" -lt "$deadline" ]; do
        n=$((n + 1))
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 1 \
            -H 'Content-Type: application/json' \
            -d "{\"name\":\"good:$RANDOM$n\",\"owner_id\":\"g\",\"ttl_ms\":1000}" \
            "$URL/v1/leases" || true)
        [ "$code" = 201 ] && return 0
        sleep 0.05
    done
    fail "$2: no answer within $1 ms ($n tries)"
}

# stat FILE KEY: a key=value from a tn-slowclient report.
stat() { tr ' ' '\n' <"$1" | sed -n "s/^$2=//p"; }

# --- idle and dripping clients fill every slot
start=$(now_ms)
"$TN_BIN/tn-slowclient" idle "$PORT" 4 $((TIMEOUT_MS * 3)) >"$T/idle.out" &
idle_pid=$!
"$TN_BIN/tn-slowclient" drip "$PORT" 4 $((TIMEOUT_MS * 3)) 100 >"$T/drip.out" &
drip_pid=$!
sleep 0.2
served_within $((TIMEOUT_MS + SLACK_MS + 500)) "well-behaved client beside idle and dripping ones"
took=$(($(now_ms) - start))
wait "$idle_pid" || fail "tn-slowclient idle failed"
wait "$drip_pid" || fail "tn-slowclient drip failed"
echo "idle: $(cat "$T/idle.out")"
echo "drip: $(cat "$T/drip.out")"
[ "$(stat "$T/idle.out" closed)" = 4 ] || fail "idle connections not all closed in $((TIMEOUT_MS * 3)) ms: $(cat "$T/idle.out")"
[ "$(stat "$T/idle.out" max_close_ms)" -le $((TIMEOUT_MS + SLACK_MS)) ] ||
    fail "an idle connection lived past the timeout: $(cat "$T/idle.out")"
[ "$(stat "$T/drip.out" closed)" = 4 ] || fail "dripping connections not all closed in $((TIMEOUT_MS * 3)) ms (the timeout must cover the whole request, not idle time): $(cat "$T/drip.out")"
[ "$(stat "$T/drip.out" max_close_ms)" -le $((TIMEOUT_MS + SLACK_MS)) ] ||
    fail "a dripping connection lived past the whole-request timeout: $(cat "$T/drip.out")"
pass "idle and dripping clients are cut at the timeout; a good client was served after $took ms"

# --- a flood of connections far over the limit
start=$(now_ms)
"$TN_BIN/tn-slowclient" idle "$PORT" 200 $((TIMEOUT_MS * 3)) >"$T/flood.out" &
flood_pid=$!
sleep 0.3
served_within $((TIMEOUT_MS + SLACK_MS + 500)) "well-behaved client during a flood of 200 connections"
took=$(($(now_ms) - start))
wait "$flood_pid" || fail "tn-slowclient flood failed"
echo "flood: $(cat "$T/flood.out")"
kill -0 "$SERVER_PID" 2>/dev/null || fail "tenured died during the flood"
[ "$(stat "$T/flood.out" closed)" = 200 ] ||
    fail "flood connections still open after $((TIMEOUT_MS * 3)) ms: $(cat "$T/flood.out")"
pass "200 idle connections over a limit of $MAX_CONNS: good client served after $took ms"

# --- afterwards, normal service on keep-alive connections
urls=()
for i in $(seq 1 20); do urls+=(-o /dev/null "$URL/v1/leases/after%3A$i"); done
codes=$(curl -s --max-time 5 -w '%{http_code}\n' "${urls[@]}" | sort | uniq -c | tr -s ' ')
[ "$codes" = " 20 404" ] || fail "20 keep-alive GETs after the attacks: $codes"
acquire "after:1" o 1000
expect_code 201 "acquire after the attacks"
pass "normal service after the attacks"
