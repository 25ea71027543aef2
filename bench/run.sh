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
# After the front end, bench/insn.sh prints the instructions per acquire.
set -euo pipefail
here=$(dirname "$0")
"$here/deps.sh"
only=${BENCH_ONLY:-all}
if [ "$only" = all ] || [[ ",$only," == *",frontend,"* ]]; then
    "$here/frontend.sh"
fi
# The user-space instructions per durable acquire of the build the front
# end measured (bench/insn.sh: callgrind, one request at a time, so the
# figure does not depend on the load; docs/PERFORMANCE.md "Budget per
# request").  BENCH_ONLY=insn runs it alone on TENURED or build/bench's.
if [ "$only" = all ] || [[ ",$only," == *",frontend,"* ]] || [[ ",$only," == *",insn,"* ]]; then
    bin=${TENURED:-$here/../build/bench/bin/tenured}
    if [ -x "$bin" ]; then
        "$here/insn.sh" "$bin"
    else
        echo "bench: no $bin for bench/insn.sh (bench/frontend.sh builds it)" >&2
    fi
fi
[ "$only" = frontend ] || [ "$only" = insn ] && exit 0
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
