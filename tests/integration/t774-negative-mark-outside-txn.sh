#!/usr/bin/env bash
# not under the sanitizers: the planted build is not sanitized (its clean
#   half, the same profile on the build under test, runs under them as t76x)
# Negative control: MARK_OUTSIDE_TXN (src/fence/sqlite.c commits the
# mark on its own, outside the data transaction).  The sink-crash profile
# kills sink writers in the middle of their transactions and rolls 10% of
# them back on purpose: the planted kit keeps a raised mark without the
# write (and the decision) it guarded, so the sink later reports an
# hwm_before above the mark replayed from its committed decisions:
# tenure-check must report sink_mark_mismatch.  The same profile with the
# normal fence kit is clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-negative.sh"
export TN_CHAOS_SECONDS=5
pb=$(neg_plant MARK_OUTSIDE_TXN tn-chaos)
res=$(neg_caught "$pb" t767-chaos-sink-crash.sh 3 "sink_mark_mismatch|sink_below_mark|sink_mark_moved_down") ||
    fail "MARK_OUTSIDE_TXN was not caught"
clean=$(neg_clean t767-chaos-sink-crash.sh)
pass "MARK_OUTSIDE_TXN caught by killed/rolled-back sink writes + tenure-check ($res); normal build: $clean"
