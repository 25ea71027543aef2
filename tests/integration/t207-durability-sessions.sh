#!/usr/bin/env bash
# Sessions survive kill -9 as docs/SESSIONS.md (invariants 5 and 6) says,
# on the embedded store:
#  1. the end of a session of 40,000 leases is answered (204) and tenured
#     is killed -9 at once, while the leases are still being settled (a
#     slice a millisecond, each slice's rows in a commit of its own): after
#     the restart no lease of it is live (the list is empty, every check
#     of a sample is current:false with its floor, the live-lease gauge is
#     0), the restart settled the rest, and another owner gets a name at
#     once (released: no lock delay);
#  2. a session that ran out and whose end was revealed by its own renew
#     (409 lost), killed -9 within milliseconds, before the idle heartbeat
#     could record that the server outlived its expiry: it stays ended,
#     and its lease with it;
#  3. a session live at the crash is live again for its full TTL from the
#     restart (about 1.5 s of its 3 s were left), with its lease.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-sessions.sh"
need_tools

LEASES=40000
tn_start_server
sessions_need

gauge() { curl -s "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# 1. kill -9 between the end's commit and the end of its settling.
s_open "big/owner" 600000
expect_code 201 "open the big session"
BIG=$SID
BSEC=$SSEC
for ((at = 0; at < LEASES; at += 1000)); do
    names=$(seq -f "ss:%g" "$at" $((at + 999)) | sed 's/.*/"&"/' | paste -sd, -)
    s_claim "$BIG" "$BSEC" "[$names]" '"lock_delay_ms":60000'
    expect_code 200 "claim ss:$at.."
    [ "$(jlen granted)" = 1000 ] || fail "claim ss:$at..: not all granted: $BODY"
done
s_get "$BIG"
expect_field leases "$LEASES" "the session holds its leases"
s_end "$BIG" "$BSEC"
expect_code 204 "end the big session"
tn_kill_server
tn_start_server
s_get "$BIG"
expect_error 404 not_found "the ended session after kill -9"
s_renew "$BIG" "$BSEC"
expect_error 409 lost "renew of the ended session after kill -9"
rj GET "/v1/leases?prefix=ss:&limit=1000"
expect_code 200 "list after kill -9"
[ "$(jlen leases)" = 0 ] ||
    fail "$(jlen leases) (or more) leases of the ended session are live again, first: $(jget leases.0)"
[ "$(gauge tenure_leases_live)" = 0 ] || fail "live leases after kill -9: $(gauge tenure_leases_live)"
for i in 0 1 511 512 4097 9999 15000 $((LEASES - 1)); do
    check_token "ss:$i" 1
    expect_code 200 "check ss:$i"
    expect_field current false "ss:$i after kill -9"
    # A fresh server granted ss:i the token i + 1 (a claim decides its
    # names in order); the floor stays that token.
    expect_field floor $((i + 1)) "the floor of ss:$i after kill -9"
done
acquire "ss:7" next 5000
expect_code 201 "another owner takes ss:7 at once (released, no lock delay)"
settled=$(gauge tenure_session_leases_settled_total)
echo "the restart settled $settled of $LEASES leases the crash left under the ended session"
[ "${settled:-0}" -gt 0 ] ||
    fail "the kill came after every lease was settled: the window was not tested"
pass "kill -9 while $LEASES leases of an ended session settled: none came back"

# 2. a revealed session expiry, then kill -9 at once.
s_open "rv/owner" 1000 # time for the acquire to land on a loaded machine
expect_code 201 "open the short session"
RV=$SID
RSEC=$SSEC
s_acquire "rv:1" w "$RV" "$RSEC"
expect_code 201 "a lease under the short session"
tok=$(jget token)
sleep_ms 1100
s_renew "$RV" "$RSEC"
expect_error 409 lost "renew after the session ran out"
tn_kill_server
tn_start_server
s_get "$RV"
expect_error 404 not_found "the revealed session after kill -9"
s_renew "$RV" "$RSEC"
expect_error 409 lost "renew of the revealed session after kill -9"
check_token "rv:1" "$tok"
expect_field current false "its lease after kill -9"
pass "a session end revealed by its renew stays after kill -9"

# 3. the restart rule: a live session gets its full TTL from the restart.
s_open "rs/owner" 6000
expect_code 201 "open the live session"
LIVE=$SID
LSEC=$SSEC
s_acquire "rs:1" w "$LIVE" "$LSEC"
tok=$(jget token)
sleep_ms 3000 # without the rule at most 3000 ms would be left
tn_kill_server
tn_start_server
s_get "$LIVE"
expect_code 200 "the live session after kill -9"
left=$(jget expires_in_ms)
[ "$left" -gt 3000 ] ||
    fail "the session has $left ms left after the restart, not its full TTL (6000)"
check_token "rs:1" "$tok"
expect_field current true "its lease after kill -9"
s_renew "$LIVE" "$LSEC"
expect_code 200 "its holder renews it"
pass "a live session is held for its full TTL from the restart, with its lease"
