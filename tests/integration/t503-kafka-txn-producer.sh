#!/usr/bin/env bash
# The optional broker-native layer: a transactional producer whose
# transactional.id is derived from the lease name.  The mock cluster does
# not fence by itself, so broker fencing is emulated with its error
# injection (PRODUCER_FENCED on AddPartitionsToTxn and on InitProducerId):
# the writer must report the lease as lost (exit 4), never success, and
# nothing of the fenced write may reach the sink.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-fence.sh"

mkfifo "$T/ctl"
"$TN_BIN/tn-kafka-mock" --stdin out:1 <"$T/ctl" >"$T/mock.out" 2>"$T/mock.err" &
MOCK_PID=$!
fence_track "$MOCK_PID"
exec 3>"$T/ctl"
for _ in $(seq 1 100); do [ -s "$T/mock.out" ] && break; sleep 0.05; done
BROKERS=$(head -1 "$T/mock.out")
[ -n "$BROKERS" ] || fail "mock cluster did not start"
inject() { # APIKEY ERR: the next request of that kind fails with ERR
    local n
    n=$(grep -c '^ok errors' "$T/mock.out" || true)
    echo "errors $1 $2 1" >&3
    for _ in $(seq 1 100); do
        [ "$(grep -c '^ok errors' "$T/mock.out" || true)" -gt "$n" ] && return 0
        sleep 0.02
    done
    fail "mock did not take the error injection"
}
txn() { "$TN_BIN/tn-txn-write" --brokers "$BROKERS" --topic out --name shard:8841 "$@" 2>>"$T/txn.err"; }

out=$(txn --token 5 --count 2) || fail "transactional write failed: $out"
echo "$out" | grep -qx 'txn-id tenure-lease:shard:8841' || fail "transactional.id not derived from the name: $out"
echo "$out" | grep -qx 'committed 2' || fail "expected 2 committed writes: $out"
pass "transactional.id is tenure-lease:<name> and writes commit"

inject 24 90 # AddPartitionsToTxn -> PRODUCER_FENCED
rc=0
out=$(txn --token 5 --count 1) || rc=$?
[ "$rc" = 4 ] && echo "$out" | grep -q '^fenced' || fail "fenced on AddPartitionsToTxn: expected exit 4, got $rc: $out"
pass "a producer fenced mid-transaction reports the lease lost (exit 4)"

inject 22 90 # InitProducerId -> PRODUCER_FENCED
rc=0
out=$(txn --token 5 --count 1) || rc=$?
[ "$rc" = 4 ] && echo "$out" | grep -q '^fenced' || fail "fenced at init: expected exit 4, got $rc: $out"
pass "a producer fenced at init never writes (exit 4)"

fence_mat --topic out --sink "sqlite:$T/sink.db" --exit-at-end 2>"$T/mat.log" || fail "materializer"
[ "$(fence_sql "sqlite:$T/sink.db" "SELECT count(*) FROM tenure_admitted")" = 2 ] \
    || fail "the sink should hold exactly the 2 committed writes"
[ "$(fence_sql "sqlite:$T/sink.db" "SELECT count(*) FROM tenure_rejected")" = 0 ] || fail "unexpected rejects"
pass "only committed transactional writes reach the sink, stamped with their token"
exec 3>&-
