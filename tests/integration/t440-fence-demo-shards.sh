#!/usr/bin/env bash
# The fair-share demo, short (examples/shards/demo.py --short, `make
# demo-shards` runs the full one): 3 workers share 300 shards through
# sessions and write through the fence into SQLite; one is frozen past its
# TTL and resumed, one joins late.  Fails when a change is not balanced
# (every shard held by the live workers, counts within one) in time, when
# a stale write was admitted, or when the frozen worker made no stale
# write at all.  Skips (77) while tenured has no sessions.
. "$(dirname "$0")/lib.sh"

tn_start_server
rc=0
${TN_PYTHON3:-/usr/bin/python3} "$TN_SRC/examples/shards/demo.py" --short \
    --server "$URL" || rc=$?
if [ "$rc" = 77 ]; then
    echo "skip: tenured has no sessions yet"
    exit 77
fi
[ "$rc" = 0 ] || fail "the demo failed (exit $rc)"
pass "balanced after every change, the resumed worker's stale writes refused, none admitted"
