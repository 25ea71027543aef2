#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench`: installs the bench-only packages (bench/deps.sh), then runs
# first the front-end comparison with durable Redis (bench/frontend.sh:
# interleaved rounds, acquire only and acquire -> release cycles at 50 and
# 200 connections, server CPU per request; about 10 minutes; the figures at
# the top of docs/PERFORMANCE.md), then the whole suite (bench/suite.sh:
# tenured and every peer, one after the other, medians of RUNS runs).
# BENCH_ONLY=frontend runs the first alone; a BENCH_ONLY list without
# "frontend" skips it (bench/suite.sh reads the same list); "followers" is
# bench/follower-latency.sh, run after the front end, and "sessions"
# bench/sessions.sh, run after that.  The older
# two-way comparison is still there as bench/bench-vs-redis.sh, and
# bench/slow-body.sh measures acquires beside 1,100 slow-body clients, and
# bench/list-flood.sh probes beside 500 clients pipelining large lists.
set -euo pipefail
here=$(dirname "$0")
"$here/deps.sh"
only=${BENCH_ONLY:-all}
if [ "$only" = all ] || [[ ",$only," == *",frontend,"* ]]; then
    "$here/frontend.sh"
fi
[ "$only" = frontend ] && exit 0
# The followers' force-release latency (bench/follower-latency.sh, on the
# dev build's test tools): BENCH_ONLY=followers runs it alone.
if [ "$only" = all ] || [[ ",$only," == *",followers,"* ]]; then
    make -C "$here/.." build
    "$here/follower-latency.sh"
fi
[ "$only" = followers ] && exit 0
# What sessions cost over HTTP against etcd, on both stores
# (bench/sessions.sh, docs/PERFORMANCE.md "Sessions over HTTP"; about 20
# minutes on a loaded 2-core host): BENCH_ONLY=sessions runs it alone.
if [ "$only" = all ] || [[ ",$only," == *",sessions,"* ]]; then
    "$here/sessions.sh"
fi
[ "$only" = sessions ] && exit 0
exec "$here/suite.sh" "$@"
