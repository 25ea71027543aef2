#!/usr/bin/env bash
# Chaos, short profile: kill -9 and restart of tenured every 0.3-1.2 s
# while 3 client processes (9 recording threads) acquire, renew, release
# and write to a fenced sink; the merged history must check clean.
# TN_CHAOS_SEED replays a schedule; TN_CHAOS_SECONDS lengthens the run;
# TN_CHAOS_KILL_MS="MIN MAX" sets the interval between kills.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-chaos.sh"
secs=${TN_CHAOS_SECONDS:-6}
# TN_CHAOS_KILL_MS="MIN MAX": the interval between kills (ms)
read -r kmin kmax <<<"${TN_CHAOS_KILL_MS:-300 1200}"
chaos_init kill9
chaos_server
chaos_clients 3 "$secs" --ttl-min 200 --ttl-max 800
while chaos_running; do
    chaos_sleep_ms "$(chaos_rand "$kmin" "$kmax")"
    chaos_running || break
    chaos_kill9 "$(chaos_rand 0 200)"
done
chaos_finish
chaos_check
pass "kill -9: $CHAOS_SUMMARY, no violation"
