#!/usr/bin/env bash
# not under the sanitizers: the planted build is not sanitized (its clean
#   half, the same profile on the build under test, runs under them as t76x)
# Negative control: WALL_CLOCK_EXPIRY (src/common/clock.c: the server clock
# is CLOCK_REALTIME).  The clock profile, with forward jumps only, makes
# live leases expire early and another client gets them: tenure-check must
# report overlapping_grant.  The same profile against the normal build
# (expiry on CLOCK_BOOTTIME) is clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-negative.sh"
export TN_CHAOS_SECONDS=5 TN_CHAOS_JUMP=forward
pb=$(neg_plant WALL_CLOCK_EXPIRY tenured)
res=$(neg_caught "$pb" t764-chaos-clock.sh 3 overlapping_grant) ||
    fail "WALL_CLOCK_EXPIRY was not caught"
clean=$(neg_clean t764-chaos-clock.sh)
pass "WALL_CLOCK_EXPIRY caught by forward wall-clock jumps + tenure-check ($res); normal build: $clean"
