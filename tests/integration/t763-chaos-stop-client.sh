#!/usr/bin/env bash
# Chaos, short profile: SIGSTOP a client process (3 recording threads) past
# its TTLs (1.0-2.0 s, TTLs 200-600 ms).  Its threads wake as zombies:
# they write to the sink with their old tokens (the fence must reject them
# once a newer holder wrote), renew and release superseded leases (the
# server must refuse).  The history must check clean, and zombie writes
# must have been rejected.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-chaos.sh"
secs=${TN_CHAOS_SECONDS:-7}
chaos_init stop-client
chaos_server
chaos_clients 3 "$secs" --ttl-min 200 --ttl-max 600 --names 2
while chaos_running; do
    chaos_sleep_ms "$(chaos_rand 100 500)"
    chaos_running || break
    # two pauses in three hit the process that wrote last: a holder
    if [ $((RANDOM % 3)) != 0 ]; then
        chaos_stop_client "$(chaos_rand 1000 2000)" latest
    else
        chaos_stop_client "$(chaos_rand 1000 2000)"
    fi
done
chaos_finish
chaos_check
[ "$CHAOS_REJECT" -ge 1 ] || fail "no zombie write reached the fence ($CHAOS_SUMMARY)"
pass "SIGSTOP clients: $CHAOS_SUMMARY (zombie writes rejected: $CHAOS_REJECT), no violation"
