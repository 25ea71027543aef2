#!/usr/bin/env bash
# A revealed end is durable (docs/safety/revealed-end.md, issue 16): a lease
# with ttl 300 ms (then 1500 ms) on an otherwise idle server runs out; its
# end is revealed
# (renew 409 lost, check current:false, GET 404, 409 lock_delay, a list
# without it, the "expired" event); tenured is killed -9 within
# milliseconds, before its idle heartbeat (about 1 s) could record that it
# was alive past the expiry, and restarted on the same data dir.  After
# the restart each of those leases must stay ended: check current:false,
# the renew with the old secret 409 lost, GET 404, and another owner gets
# the name at once (or 409 lock_delay while its delay lasts).
# A server that undoes the end holds the lease again for its TTL from the
# restart (CONTRACT §4.5), so with 300 ms the revival may be over
# before the first check; with 1500 ms it is still on (and the expiry,
# 1.5 s after the acquire, still falls between two idle heartbeats).
# TN_REVEAL_CYCLES (default 2) sets the number of rounds over both TTLs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools

CYCLES=${TN_REVEAL_CYCLES:-2}
TTLS="300 1500"
WAYS="renew check get delay list event"
tn_start_server

# reveal C W TTL: acquire rvC:W with TTL, let it run out, reveal its end by
# way W, kill -9 at once, restart, and require the end to have stayed.
reveal() {
    local c=$1 w=$2 ttl=$3 n="rv$1-$3:$2" extra="" tok sec ev_pid=""
    if [ "$w" = event ]; then
        curl -sN --max-time 10 "$URL/v1/events?prefix=$n" >"$T/events.$c.$ttl" &
        ev_pid=$!
        tn_wait_subscribers 1
    fi
    [ "$w" = delay ] && extra='"lock_delay_ms":60000'
    acquire "$n" holder "$ttl" "$extra"
    expect_code 201 "acquire $n"
    tok=$(jget token)
    sec=$(jget lease_secret)
    # Until the lease ran out (its expiry is receipt + TTL + 1 ms); the
    # idle heartbeats come about 1 s and 2 s after this acquire's commit.
    sleep_ms $((ttl + 50))
    case $w in
    renew)
        renew "$n" "$tok" "$sec"
        expect_error 409 lost "$n: renew after the expiry"
        ;;
    check)
        check_token "$n" "$tok"
        expect_code 200 "$n: check after the expiry"
        expect_field current false "$n: check after the expiry"
        ;;
    get)
        get_lease "$n"
        expect_code 404 "$n: GET after the expiry"
        ;;
    delay)
        acquire "$n" other 60000
        expect_error 409 lock_delay "$n: acquire in the lock delay"
        ;;
    list)
        rj GET "/v1/leases?prefix=$n"
        expect_code 200 "$n: list after the expiry"
        [ "$(jget leases)" = "[]" ] ||
            fail "$n: the list still shows the expired lease: $BODY"
        ;;
    event)
        for _ in $(seq 1 1250); do # up to 5 s on a loaded machine
            grep -q '"type":"expired"' "$T/events.$c.$ttl" && break
            sleep 0.004
        done
        grep -q "\"type\":\"expired\".*\"token\":$tok" "$T/events.$c.$ttl" ||
            fail "$n: no expired event: $(cat "$T/events.$c.$ttl")"
        ;;
    esac
    tn_kill_server
    if [ -n "$ev_pid" ]; then
        kill "$ev_pid" 2>/dev/null || true
        wait "$ev_pid" 2>/dev/null || true
    fi
    tn_start_server
    check_token "$n" "$tok"
    expect_code 200 "check $n after the restart"
    expect_field current false "check $n (revealed by $w) after the restart"
    renew "$n" "$tok" "$sec"
    expect_error 409 lost "renew $n (revealed by $w) with the old secret after the restart"
    get_lease "$n"
    expect_code 404 "GET $n after the restart"
    acquire "$n" other 60000
    if [ "$w" = delay ]; then
        expect_error 409 lock_delay "$n still in its lock delay after the restart"
    else
        expect_code 201 "another owner acquires $n after the restart"
        [ "$(jget token)" -gt "$tok" ] ||
            fail "$n granted with token $(jget token) <= $tok"
    fi
}

for c in $(seq 1 "$CYCLES"); do
    for ttl in $TTLS; do
        for w in $WAYS; do
            reveal "$c" "$w" "$ttl"
        done
    done
done
pass "$CYCLES rounds (ttl $TTLS ms): expiries revealed by $WAYS stayed ended across kill -9"
