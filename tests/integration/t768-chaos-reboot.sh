#!/usr/bin/env bash
# Chaos, short profile: kill -9, then restart as if on another boot (a
# reboot, or the data directory restored on another host): while tenured is
# down the store is rewritten so that its boot id is another one and every
# stored CLOCK_BOOTTIME instant (lease expiries, the last sign of life) is
# 1-1000 s behind the current clock, as instants of another boot are (the
# journal is applied to tenure.db first, so the rewrite reaches everything).  No
# stored instant may then be trusted: every lease that may have been live
# at the kill must stay held for its full TTL after the restart (CONTRACT
# section 4.5).  The history must check clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-chaos.sh"
secs=${TN_CHAOS_SECONDS:-6}
chaos_init reboot
chaos_server
chaos_clients 3 "$secs" --ttl-min 300 --ttl-max 900 --names 4
while chaos_running; do
    chaos_sleep_ms "$(chaos_rand 300 1000)"
    chaos_running || break
    shift_ms=$(($(chaos_rand 1 1000) * 1000))
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    chaos_note "kill -9 tenured, reboot: boot id changed, stored instants -$shift_ms ms"
    kill -9 "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    # What the journal holds beyond tenure.db was written in the old boot
    # too: apply it to the file first, so that the rewrite shifts it.
    "$CHAOS" settle "$T/data" || fail "cannot apply the journal"
    "$CHAOS" sql "$T/data/tenure.db" "
        UPDATE meta SET value = 'chaos-$CHAOS_SEED-$CHAOS_FAULTS' WHERE key = 'boot_id';
        UPDATE meta SET value = value - $shift_ms WHERE key = 'alive_at_ms';
        UPDATE leases SET expires_at_ms = expires_at_ms - $shift_ms;" ||
        fail "cannot rewrite the store"
    tn_start_server
    chaos_note "tenured restarted"
done
chaos_finish
chaos_check
pass "reboots: $CHAOS_SUMMARY, no violation"
