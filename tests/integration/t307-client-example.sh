#!/usr/bin/env bash
# The worker of docs/CLIENT.md is the one that is built and tested, and it
# works: every write carries the token of its grant, the lease is released
# at the end, and it stops with 3 when someone else holds the lease.
# The TTL (1.5 s) outlives the 1 s of work, with a renewal in between, and
# leaves room for a loaded machine that stalls the worker for a while.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
tn_start_server
export TENURE_SERVER=$URL

sed -n '/^```c$/,/^```$/p' "$TN_SRC/docs/CLIENT.md" | sed '1d;$d' >"$T/doc.c"
diff -u "$TN_SRC/tests/tools/client/worker_example.c" "$T/doc.c" \
    || fail "docs/CLIENT.md and tests/tools/client/worker_example.c differ"

"$TN_BIN/tn-worker-example" shard:8841 1500 20 "$T/sink" >"$T/out" 2>"$T/err" \
    || fail "worker failed: $(cat "$T/out" "$T/err")"
tok=$(sed -n 's/^worker: holding shard:8841 with token //p' "$T/out")
[ "$(wc -l <"$T/sink")" = 20 ] || fail "expected 20 writes: $(cat "$T/sink")"
[ "$(grep -c "^token=$tok " "$T/sink")" = 20 ] || fail "writes not stamped with $tok"
expect_exit 5 "released at the end" "$TENURE" get shard:8841

expect_exit 0 "someone else" "$TENURE" acquire shard:8841 --ttl 5s
expect_exit 3 "worker on a held lease" "$TN_BIN/tn-worker-example" shard:8841 300 1 "$T/sink2"
[ ! -e "$T/sink2" ] || fail "wrote without the lease"
pass "documented worker example"
