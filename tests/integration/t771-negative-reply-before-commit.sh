#!/usr/bin/env bash
# not under the sanitizers: the planted build is not sanitized (its clean
#   half, the same profile on the build under test, runs under them as t76x)
# Negative control: REPLY_BEFORE_COMMIT (src/store/embedded/change.c answers
# a mutation before its commit).  Under a fast acquire/release load with
# kill -9 every 0.15-0.5 s, grants acknowledged but not yet committed are
# lost at the kill, and the restarted server hands their tokens out again:
# tenure-check must report a reused token (token_order or
# duplicate_token).  The same profile against the normal build is clean.
# Both run on a slow disk (the fsync shim adds 3 ms to every fdatasync and
# to every journal pwrite): a kill -9 loses only what was never written
# (the page cache outlives the process), and on a fast disk the write
# comes microseconds after the early answer (inline, the default) or the
# committer writes almost every row before its answer leaves (thread), so
# the kills rarely find one.  With the slow disk, answered rows wait for
# their write.  Runs in the default mode, and as -thread with
# TENURE_COMMIT=thread (tests/integration/CMakeLists.txt).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-negative.sh"
export TN_CHAOS_SECONDS=6 TN_CHAOS_KILL_MS="150 500"
export TN_CHAOS_CLIENT_ARGS="--threads 8 --names 64 --max-rounds 0 --ttl-min 100 --ttl-max 400"
export TN_CHAOS_FSYNC_DELAY_US=3000
pb=$(neg_plant REPLY_BEFORE_COMMIT tenured tn_chaos_fsync)
# The planted build is not sanitized: it takes the shim built with it.
shim=$TN_PLANT_DIR/REPLY_BEFORE_COMMIT/build/lib/tn-chaos-fsync.so
[ -f "$shim" ] || fail "missing $shim"
res=$(TN_WRAP="env LD_PRELOAD=$shim" neg_caught "$pb" t761-chaos-kill9.sh 8 "token_order|duplicate_token") || fail "REPLY_BEFORE_COMMIT was not caught"
echo "$res"
shim=$TN_BIN/../lib/tn-chaos-fsync.so
[ -f "$shim" ] || fail "missing $shim (build tn_chaos_fsync)"
clean=$(TN_WRAP="env LD_PRELOAD=$shim ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" neg_clean t761-chaos-kill9.sh)
pass "REPLY_BEFORE_COMMIT caught by kill -9 + tenure-check ($res); normal build: $clean"
