#!/usr/bin/env bash
# Chaos, short profile: SIGSTOP tenured past the clients' TTLs (0.9-1.6 s,
# TTLs 200-800 ms), then SIGCONT, again and again, under the recording
# clients; requests in flight time out (info).  The history must check
# clean: a frozen server must not, on waking, hand out a lease that a
# client could still have believed valid, nor honour a stale renew.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-chaos.sh"
secs=${TN_CHAOS_SECONDS:-6}
chaos_init stop-server
chaos_server
chaos_clients 3 "$secs" --ttl-min 200 --ttl-max 800 --names 5
while chaos_running; do
    chaos_sleep_ms "$(chaos_rand 200 700)"
    chaos_running || break
    chaos_stop_server "$(chaos_rand 900 1600)"
done
chaos_finish
chaos_check
[ "$CHAOS_INFO" -ge 1 ] || fail "no request timed out while tenured was stopped ($CHAOS_SUMMARY)"
pass "SIGSTOP tenured: $CHAOS_SUMMARY, no violation"
