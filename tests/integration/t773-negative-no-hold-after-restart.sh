#!/usr/bin/env bash
# not under the sanitizers: the planted build is not sanitized (its clean
#   half, the same profile on the build under test, runs under them as t76x)
# Negative control: NO_HOLD_AFTER_RESTART (src/store/embedded/sqlite.c trusts the
# stored expiries after a restart).  Two catches:
#  1. the reboot profile (kill -9, restart as if on another boot, where the
#     stored CLOCK_BOOTTIME instants mean nothing): the planted server drops
#     leases whose holders' TTLs have not run out and grants them to others:
#     tenure-check must report overlapping_grant;
#  2. the crash test's verifier (t202, 3 cycles): a lease live at the kill
#     must be held for its full TTL counted from the restart; the planted
#     server reports shorter expiries, and tn-hammer probe flags them.
# Both pass against the normal build.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-negative.sh"
export TN_CHAOS_SECONDS=5
pb=$(neg_plant NO_HOLD_AFTER_RESTART tenured)
res=$(neg_caught "$pb" t768-chaos-reboot.sh 3 overlapping_grant) ||
    fail "NO_HOLD_AFTER_RESTART was not caught by the reboot profile"
clean=$(neg_clean t768-chaos-reboot.sh)
out=$(TN_BIN=$pb TN_CRASH_CYCLES=3 bash "$IT/t202-durability-crash.sh" 2>&1) &&
    fail "the crash test passed against NO_HOLD_AFTER_RESTART: $(grep '^ok' <<<"$out")"
grep -q 'VIOLATION' <<<"$out" ||
    fail "the crash test failed against the plant, but not by its verifier: $(grep FAIL <<<"$out" | head -c 2000)"
v=$(grep -m1 -o 'VIOLATION [a-z_ ]*' <<<"$out")
out=$(TN_CRASH_CYCLES=3 bash "$IT/t202-durability-crash.sh" 2>&1) ||
    fail "the crash test fails against the normal build: $(grep FAIL <<<"$out" | head -c 2000)"
pass "NO_HOLD_AFTER_RESTART caught by the reboot profile + tenure-check ($res) and by the crash test's verifier ($v); normal build: $clean; crash test clean"
