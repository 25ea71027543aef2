#!/usr/bin/env bash
# Chaos, Patroni profile with both standbys synchronous (docs/HA.md): the
# cluster of t779 with synchronous_node_count 2, so that either standby
# may be promoted and a rejoining old primary becomes a synchronous
# standby again.  Patroni 3.0.2 writes synchronous_standby_names as
# "2 (a, b)" (both must confirm; quorum commit, ANY 1, is Patroni 4's
# synchronous_mode: quorum), and with one standby left, that one.  The
# faults: kill -9 of the primary's postmaster, then a double failure (the
# primary and a synchronous standby killed together, Patroni and
# postgres, back 15 s later): the last node is promoted and, with no
# standby, strict mode stops every write until one comes back; nothing
# acknowledged may be lost.  Long with TN_CHAOS_SECONDS
# (scripts/chaos.sh --profiles patroni-quorum).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-patroni.sh"
pat_prepare
export TN_PATRONI_SYNC_COUNT=2
pat_profile patroni-quorum "postmaster double freeze patroni"
pass "Patroni, two synchronous standbys: $CHAOS_SUMMARY failovers=$PAT_FAILOVERS, no violation, no acknowledged grant lost; ${PAT_SUMMARY#patroni-summary: }"
