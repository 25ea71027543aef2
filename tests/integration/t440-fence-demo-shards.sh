#!/usr/bin/env bash
# not under the sanitizers: the Python demo (the sessions it drives run
#   under the sanitizers in t130, t207 and t320-t325)
# The fair-share demo, short (examples/shards/demo.py --short, `make
# demo-shards` runs the full one): 3 workers share 300 shards through
# sessions and write through the fence into SQLite; one is frozen past its
# TTL and resumed, one joins late.  Fails when a change is not balanced
# (every shard held by the live workers, counts within one) in time, when
# a shard of the frozen worker did not go to another with a higher token,
# when a stale write was admitted (below a token already admitted, or of
# the resumed worker with a token it held when it froze), or when the
# frozen worker made no stale write at all.  Then the negative control: the same run with the sink's
# token check off (TN_DEMO_FENCE=off) must fail, the resumed worker's
# stale writes admitted.  Skips (77) while tenured has no sessions.
. "$(dirname "$0")/lib.sh"

demo() {
    ${TN_PYTHON3:-/usr/bin/python3} "$TN_SRC/examples/shards/demo.py" --short \
        --server "$URL" "$@"
}

tn_start_server
rc=0
demo || rc=$?
if [ "$rc" = 77 ]; then
    echo "skip: tenured has no sessions yet"
    exit 77
fi
[ "$rc" = 0 ] || fail "the demo failed (exit $rc)"
pass "balanced after every change, the resumed worker's stale writes refused, none admitted"

rc=0
TN_DEMO_FENCE=off demo >"$T/off.log" 2>&1 || rc=$?
cat "$T/off.log"
[ "$rc" = 1 ] || fail "with the fence off the demo did not fail (exit $rc)"
grep -q "FAIL: stale writes were admitted" "$T/off.log" ||
    fail "with the fence off the demo failed for another reason"
pass "with the fence off the resumed worker's stale writes were admitted, and the demo says so"
