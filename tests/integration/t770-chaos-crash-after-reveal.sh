#!/usr/bin/env bash
# Chaos, short profile: crash after reveal (docs/safety/revealed-end.md).  Two
# client processes (one thread each) acquire leases of 1.1-1.5 s on names
# of their own, let them run out, then ask about each (check and renew,
# 80-250 ms apart) until six checks were answered; questions the server
# could not answer (it was down) do not count.  The TTL is long enough
# that a server that revives the lease at the restart (for its TTL from
# there) still holds it when the questions resume on a loaded host, and
# short enough that its expiry falls between two idle heartbeats (1 s
# apart).  The nemesis watches the history: as soon as an answer revealed
# an end (current:false or `lost`) since the last restart, it waits 0-60 ms
# and kills tenured -9, then restarts it.  The load is light, so the
# server is usually idle between the acquire that last wrote and the kill,
# the case its idle heartbeat does not cover.  tenure-check must find no
# renew that succeeded after `lost`, no check that answered current:true
# after current:false, and nothing else.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-chaos.sh"
secs=${TN_CHAOS_SECONDS:-12}
chaos_init crash-after-reveal
chaos_server
chaos_clients 2 "$secs" --threads 1 --ttl-min 1100 --ttl-max 1500 --reveal 6 \
    --prefix "rv:"
# reveals: answers so far that revealed an end.
reveals() { cat "$T"/h/c*.jsonl 2>/dev/null | grep -c -e '"current":false' -e '"error":"lost"' || true; }
seen=0
while chaos_running; do
    now=$(reveals)
    if [ "$now" -le "$seen" ]; then
        chaos_sleep_ms 15
        continue
    fi
    chaos_sleep_ms "$(chaos_rand 0 60)"
    chaos_running || break
    chaos_kill9 0
    chaos_sleep_ms 400 # let some questions come after the restart
    seen=$(reveals)
done
chaos_finish
chaos_check 4
reveals=$(grep -c -e '"current":false' -e '"error":"lost"' "$T/history.jsonl" || true)
[ "$reveals" -ge 4 ] || fail "only $reveals answers revealed an end: the run proved little ($CHAOS_SUMMARY)"
pass "crash after reveal: $CHAOS_SUMMARY, $reveals revealing answers, no violation"
