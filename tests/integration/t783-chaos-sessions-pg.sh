#!/usr/bin/env bash
# Chaos, short profile: the sessions profile (t782) with tenured on
# PostgreSQL (--store postgresql://, a private throw-away cluster): among
# the faults, the database crashes (SIGKILL of the postmaster) or stops
# (immediate) for 0.3-1.5 s and starts again, besides kill -9 of tenured
# and SIGSTOP of session holders past their TTLs.  The history must check
# clean.  Skips (77) when PostgreSQL 15 is not installed or the store has
# no sessions.
TN_CHAOS_STORE=pg exec bash "$(dirname "$0")/t782-chaos-sessions.sh" "$@"
