#!/usr/bin/env bash
# PostgreSQL: a claim must not take a name from a session that was opened
# after the claim's statement took its snapshot.  Session b's claim of
# [a, x] takes its snapshot, then waits for the row lock of a (held here
# by psql for 3 s); meanwhile session a is opened and claims x.  When b's
# claim goes on, x is held under a live session: b must not be granted x
# (found by the sessions chaos profile t783 as overlapping_grant and
# superseded_success: two sessions granted the same name).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need
pg_fresh_schema t618
pg_start_instance 1 "$PG_URL"
URL=${URLS[1]}
j() { curl -s --max-time 20 -X "$1" -H 'Content-Type: application/json' "$URL$2" ${3:+--data-binary "$3"}; }
jf() { "$TN_BIN/tn-json-get" "$1"; }
# The rows of a and x exist (released), so that b's claim locks them in
# name order.
for n in a x; do
    r=$(j POST /v1/leases "{\"name\":\"$n\",\"owner_id\":\"seed\",\"ttl_ms\":60000}")
    j DELETE "/v1/leases/$n" "{\"token\":$(jf token <<<"$r"),\"lease_secret\":\"$(jf lease_secret <<<"$r")\"}" >/dev/null
done
r=$(j POST /v1/sessions '{"owner_id":"b","ttl_ms":60000}')
B=$(jf session_id <<<"$r") BS=$(jf session_secret <<<"$r")
[ -n "$B" ] || fail "cannot open session b: $r"
"$PG_BINDIR/psql" -X -q "$PG_URL" -c "BEGIN; SELECT name FROM leases WHERE name = 'a' FOR UPDATE; SELECT pg_sleep(3); COMMIT;" >/dev/null &
lockpid=$!
sleep 0.5
j POST "/v1/sessions/$B/leases" "{\"session_secret\":\"$BS\",\"names\":[\"a\",\"x\"]}" >"$T/b.json" &
bpid=$!
sleep 0.5
r=$(j POST /v1/sessions '{"owner_id":"a","ttl_ms":60000}')
A=$(jf session_id <<<"$r") AS=$(jf session_secret <<<"$r")
ra=$(j POST "/v1/sessions/$A/leases" "{\"session_secret\":\"$AS\",\"names\":[\"x\"]}")
ta=$(jf granted.0.token <<<"$ra")
[ -n "$ta" ] || fail "session a was not granted x: $ra"
wait "$lockpid"
wait "$bpid"
rb=$(cat "$T/b.json")
grep -q '"name":"x","token"' <<<"$(jf granted <<<"$rb")" &&
    fail "x was granted to session b while session a held it (token $ta): b's claim answered $rb; x is now $(j GET /v1/leases/x)"
grep -q '"name":"x"' <<<"$(jf held <<<"$rb")" || fail "b's claim did not answer x held: $rb"
c=$(j GET "/v1/leases/x/check?token=$ta")
[ "$(jf current <<<"$c")" = true ] || fail "session a's x (token $ta) is no longer current: $c"
pass "a claim whose snapshot predates a session does not take that session's name (b's answer: $rb)"
