#!/usr/bin/env bash
# Chaos, Patroni profile (docs/HA.md): failover without a person.  Three
# PostgreSQL nodes under Patroni 3.0.2 with one etcd (the recipe of
# contrib/patroni: synchronous_mode and synchronous_mode_strict, one
# synchronous standby, etcd's v2 API, pg_rewind), three tenured with
# --require-sync-standby naming the nodes in three orders, recording
# clients on all three, a long-lived holder (tenure run, TTL 60 s) and a
# session holding three leases (session_holder.py, TTL 60 s).  The
# nemesis, on the primary: kill -9 of its postmaster, every process of
# the node stopped for 15-25 s (a paused machine: it must come back as a
# rewound replica, never as a second primary), kill -9 of its Patroni
# (restarted later), the node cut from etcd, etcd killed; each fault
# waits until the cluster is whole again (tests/integration/lib-patroni.sh).
# After every fault every grant a client was told of must be in the
# primary's ledger; at the end the whole history must check clean.
# Prints per fault how long the clients could not get a lease, when a
# node became writable and how long after that each instance served, and
# how the old primary came back.  Short in make check (about two faults);
# TN_CHAOS_SECONDS makes it long (scripts/chaos.sh --profiles
# patroni-failover); TN_PATRONI_KINDS="a b ..." picks the faults.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-patroni.sh"
pat_prepare
pat_profile patroni-failover "postmaster freeze patroni etcd-cut etcd-kill"
pass "Patroni failover: $CHAOS_SUMMARY failovers=$PAT_FAILOVERS, no violation, no acknowledged grant lost; ${PAT_SUMMARY#patroni-summary: }"
