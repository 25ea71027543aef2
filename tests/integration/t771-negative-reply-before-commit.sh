#!/usr/bin/env bash
# Negative control: REPLY_BEFORE_COMMIT (src/store/embedded/change.c answers
# a mutation before its commit).  Under a fast acquire/release load with
# kill -9 every 0.15-0.5 s, grants acknowledged but not yet committed are
# lost at the kill, and the restarted server hands their tokens out again:
# tenure-check must report a reused token (token_order or
# duplicate_token).  The same profile against the normal build is clean.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-negative.sh"
export TN_CHAOS_SECONDS=6 TN_CHAOS_KILL_MS="150 500"
export TN_CHAOS_CLIENT_ARGS="--threads 8 --names 64 --max-rounds 0 --ttl-min 100 --ttl-max 400"
pb=$(neg_plant REPLY_BEFORE_COMMIT tenured)
res=$(neg_caught "$pb" t761-chaos-kill9.sh 8 "token_order|duplicate_token") || fail "REPLY_BEFORE_COMMIT was not caught"
echo "$res"
clean=$(neg_clean t761-chaos-kill9.sh)
pass "REPLY_BEFORE_COMMIT caught by kill -9 + tenure-check ($res); normal build: $clean"
