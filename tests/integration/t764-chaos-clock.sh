#!/usr/bin/env bash
# Chaos, short profile: wall-clock jumps of tenured, +-2^k ms for k in
# 2..18 (4 ms to 262 s), through libfaketime with
# FAKETIME_DONT_FAKE_MONOTONIC=1 (which leaves CLOCK_MONOTONIC and
# CLOCK_BOOTTIME alone: checked first, below).  Expiry runs on
# CLOCK_BOOTTIME, so no jump may end a lease early or stretch one.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-chaos.sh"
secs=${TN_CHAOS_SECONDS:-6}
chaos_init clock
chaos_faketime_env
# The premise: under this setting a jump moves CLOCK_REALTIME only.
echo "+262.144" >"$T/faketime"
out=$($TN_WRAP "$CHAOS" clocks) || fail "tn-chaos clocks failed"
read -r rt mono boot <<<"$out"
ref=$("$CHAOS" clocks)
read -r rt0 mono0 boot0 <<<"$ref"
[ $((rt - rt0)) -gt 261000 ] || fail "libfaketime did not move the wall clock: $out vs $ref"
d_mono=$((mono0 - mono)) d_boot=$((boot0 - boot))
[ "${d_mono#-}" -lt 2000 ] && [ "${d_boot#-}" -lt 2000 ] ||
    fail "libfaketime moved CLOCK_MONOTONIC or CLOCK_BOOTTIME: $out vs $ref"
echo "+0" >"$T/faketime"
chaos_server
chaos_clients 3 "$secs" --ttl-min 200 --ttl-max 800 --names 4
while chaos_running; do
    chaos_sleep_ms "$(chaos_rand 100 400)"
    chaos_running || break
    chaos_jump "${TN_CHAOS_JUMP:-any}"
done
chaos_finish
chaos_check
pass "wall-clock jumps: $CHAOS_SUMMARY, no violation"
