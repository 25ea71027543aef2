#!/usr/bin/env bash
# Chaos, short profile: fsync fails.  tenured runs with the LD_PRELOAD shim
# tn-chaos-fsync.so; once the trigger file exists every fsync/fdatasync
# returns EIO.  From then on tenured must stop answering success: every
# mutation is refused with 503 and /readyz is not 200, and it stays so even
# after the disk "heals" (the file's state is unknown after a failed fsync)
# until it is restarted.  Then it serves again.  The history of the
# recording clients around all this must check clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-chaos.sh"
secs=${TN_CHAOS_SECONDS:-8}
shim=$TN_BIN/../lib/tn-chaos-fsync.so
[ -f "$shim" ] || fail "missing $shim (build tn_chaos_fsync)"
trigger=$T/fsync-fails
# shellcheck disable=SC2034 # read by tn_start_server (lib.sh)
TN_WRAP="env LD_PRELOAD=$shim TN_CHAOS_FSYNC_FAIL=$trigger ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

chaos_init fsync
chaos_server
chaos_clients 3 "$secs" --ttl-min 200 --ttl-max 800 --names 4
episodes=0
while chaos_running; do
    chaos_sleep_ms "$(chaos_rand 400 1000)"
    chaos_running || break
    episodes=$((episodes + 1))
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    touch "$trigger"
    chaos_note "fsync fails with EIO from now on"
    # The next commit fails; from then on no success.
    for i in $(seq 1 100); do
        acquire "probe:$episodes:$i" probe 1000
        [ "$CODE" = 503 ] && break
        [ "$CODE" = 201 ] || fail "acquire while fsync fails: $CODE $BODY"
        sleep 0.02
    done
    [ "$CODE" = 503 ] || fail "tenured kept answering 201 while fsync failed"
    chaos_sleep_ms "$(chaos_rand 200 600)"
    rm -f "$trigger"
    chaos_note "fsync works again"
    chaos_sleep_ms 300
    acquire "probe:$episodes:after" probe 1000
    [ "$CODE" = 503 ] || fail "tenured answered $CODE after a failed fsync, before a restart: $BODY"
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz")" != 200 ] ||
        fail "/readyz is 200 after a failed fsync"
    chaos_kill9 0
    acquire "probe:$episodes:restarted" probe 1000
    expect_code 201 "acquire after the restart"
done
chaos_finish
chaos_check
[ "$episodes" -ge 1 ] || fail "no fsync failure was injected"
pass "fsync EIO: $episodes episodes, each fail-stop (503) until restarted; $CHAOS_SUMMARY, no violation"
