#!/usr/bin/env bash
# tenure watch shows a takeover live: indexer-17's lease expires and
# indexer-04 takes shard:8841; the watcher prints acquired, expired,
# acquired in that order, with the tokens, and --json prints the raw
# events.  Names outside --prefix are not shown.
. "$(dirname "$0")/lib.sh"
tn_start_server
TN="$TN_BIN/tenure --server $URL"

$TN watch --prefix shard: --count 3 >"$T/watch.txt" &
w1=$!
$TN watch --prefix shard: --count 3 --json >"$T/watch.json" &
w2=$!
tn_wait_subscribers 2
$TN acquire other:1 --ttl 5s --owner x >/dev/null
$TN acquire shard:8841 --ttl 300ms --owner indexer-17 >/dev/null
sleep 0.6
$TN acquire shard:8841 --ttl 5s --owner indexer-04 >/dev/null
wait "$w1" || fail "tenure watch exited $?"
wait "$w2" || fail "tenure watch --json exited $?"
got=$(awk '{print $1, $2, $3}' "$T/watch.txt" | tr '\n' ';')
[ "$got" = "acquired shard:8841 owner=indexer-17;expired shard:8841 owner=indexer-17;acquired shard:8841 owner=indexer-04;" ] ||
    fail "watch output: $(cat "$T/watch.txt")"
t1=$(sed -n 1p "$T/watch.json" | "$TN_BIN/tn-json-get" token)
t3=$(sed -n 3p "$T/watch.json" | "$TN_BIN/tn-json-get" token)
[ "$t3" -gt "$t1" ] || fail "takeover token $t3 not above $t1"
[ "$(sed -n 2p "$T/watch.json" | "$TN_BIN/tn-json-get" type)" = expired ] ||
    fail "second JSON event: $(sed -n 2p "$T/watch.json")"
pass "tenure watch shows the takeover live, in order, human and --json"
