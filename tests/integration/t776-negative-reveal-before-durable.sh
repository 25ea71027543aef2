#!/usr/bin/env bash
# not under the sanitizers: the planted build is not sanitized (its clean
#   half, the same profile on the build under test, runs under them as t76x)
# Negative control: REVEAL_BEFORE_DURABLE (src/store/embedded/events.c
# reveals an expiry without recording it, as tenured did before
# docs/safety/revealed-end.md).  Two catches:
#  1. the crash-after-reveal profile (t770): a lease answered `lost` or
#     current:false before a kill -9 comes back after the restart, and
#     tenure-check reports renew_after_lost or check_revived;
#  2. the revival sequence (t205, one round): check answers current:true
#     after the restart.
# Both pass against the normal build.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-negative.sh"
pb=$(neg_plant REVEAL_BEFORE_DURABLE tenured)
res=$(neg_caught "$pb" t770-chaos-crash-after-reveal.sh 3 'renew_after_lost|check_revived') ||
    fail "REVEAL_BEFORE_DURABLE was not caught by the crash-after-reveal profile"
clean=$(neg_clean t770-chaos-crash-after-reveal.sh)
out=$(TN_BIN=$pb TN_REVEAL_CYCLES=1 bash "$IT/t205-durability-revealed-expiry.sh" 2>&1) &&
    fail "the revival test passed against REVEAL_BEFORE_DURABLE: $(grep '^ok' <<<"$out")"
v=$(grep -m1 '^FAIL' <<<"$out")
grep -q 'after the restart' <<<"$v" ||
    fail "the revival test failed against the plant, but not after the restart: $v"
out=$(TN_REVEAL_CYCLES=1 bash "$IT/t205-durability-revealed-expiry.sh" 2>&1) ||
    fail "the revival test fails against the normal build: $(grep FAIL <<<"$out" | head -c 2000)"
pass "REVEAL_BEFORE_DURABLE caught by the crash-after-reveal profile + tenure-check ($res) and by the revival test ($v); normal build: $clean; revival test clean"
