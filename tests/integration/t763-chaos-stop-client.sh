#!/usr/bin/env bash
# Chaos, short profile: SIGSTOP a client process (3 recording threads) past
# its TTLs (1.0-2.0 s, TTLs 200-600 ms).  Its threads wake as zombies:
# they write to the sink with their old tokens (the fence must reject them
# once a newer holder wrote), renew and release superseded leases (the
# server must refuse).  The history must check clean, and zombie writes
# must have been rejected.
# The schedule is random, so a run of SECONDS can end before a zombie wrote
# (seen under AddressSanitizer on a loaded machine: 3 pauses in 7 s, none
# of them on a holder whose lease was taken over in time).  The clients
# may run up to four times as long; the nemesis ends the run, through a
# stop file, at the first check past SECONDS that finds a rejected write.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-chaos.sh"
secs=${TN_CHAOS_SECONDS:-7}
chaos_init stop-client
chaos_server
chaos_clients 3 $((secs * 4)) --ttl-min 200 --ttl-max 600 --names 2 \
    --stop-file "$T/stop"
t_enough=$((SECONDS + secs))
while chaos_running; do
    if [ ! -e "$T/stop" ] && [ "$SECONDS" -ge "$t_enough" ] &&
        [ "$(chaos_rejects)" -ge 1 ]; then
        chaos_note "a zombie write was rejected: the run ends"
        touch "$T/stop"
    fi
    chaos_sleep_ms "$(chaos_rand 100 500)"
    [ -e "$T/stop" ] && continue # no more faults: let the clients end
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
