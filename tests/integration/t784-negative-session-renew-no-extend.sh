#!/usr/bin/env bash
# Negative control: SESSION_RENEW_NO_EXTEND (src/lease/session.c answers a
# session renew but keeps the old expiry, so the renew extends none of the
# session's leases).  The sessions profile (t782) must catch it:
# tenure-check reports overlapping_grant (a name of the session granted
# to another worker before the TTL its holder's acknowledged renew
# promised).  The same profile passes against the normal build.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-negative.sh"
export TN_CHAOS_SECONDS=5
pb=$(neg_plant SESSION_RENEW_NO_EXTEND tenured)
res=$(neg_caught "$pb" t782-chaos-sessions.sh 3 overlapping_grant) ||
    fail "SESSION_RENEW_NO_EXTEND was not caught by the sessions profile"
clean=$(neg_clean t782-chaos-sessions.sh)
pass "SESSION_RENEW_NO_EXTEND caught by the sessions profile + tenure-check ($res); normal build: $clean"
