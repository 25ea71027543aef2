#!/usr/bin/env bash
# A kept session ended by an admin is heard from the stream tenured
# --publish fills, by libtenure's Redis follower (events_url) and by
# libtenure-kafka's Kafka follower (librdkafka's mock cluster), as it is
# from the SSE stream (t320): the session_ended record marks the session
# lost, and its keepalive reports every lease of it and the session once,
# long before its renew timer (a third of a 30 s TTL) would have found it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
. "$(dirname "$0")/lib-fence.sh"
. "$(dirname "$0")/lib-publish.sh"
trap 'fence_cleanup; tn_client_cleanup' EXIT
pub_start_redis
fence_start_mock lease-events:1
REDIS_EV="redis://127.0.0.1:$REDIS_PORT/tenure:events"
KAFKA_EV="kafka://$BROKERS/lease-events"
fence_start_server --publish "$REDIS_EV" --publish "$KAFKA_EV"
need_sessions

# follow KIND EV: a session of five leases followed through EV, force-ended.
follow() {
    TN_PROBE_EVENTS=$2 "$PROBE" session "$URL" "$1:" 30000 20000 5 >"$T/probe.$1" 2>&1 &
    P=$!
    TN_CLIENT_PIDS+=("$P")
    wait_grep "$T/probe.$1" '^session id=' 1 10 || fail "$1: no session: $(cat "$T/probe.$1")"
    sleep 1 # its follower has found where the stream ends
    local sid t_force end cb_at
    sid=$(sed -n 's/^session id=\([0-9a-f]*\) .*/\1/p' "$T/probe.$1")
    t_force=$(mono)
    req DELETE "/v1/sessions/$sid?force=true"
    expect_code 204 "$1: force end"
    wait_exit "$P" 15 || fail "$1: probe did not finish: $(cat "$T/probe.$1")"
    end=$(grep '^end ' "$T/probe.$1") || fail "$1: no end: $(cat "$T/probe.$1")"
    [ "$(kv "$end" reason)" = lost ] || fail "$1: $end"
    [ "$(kv "$end" calls)" = 1 ] || fail "$1: $end"
    [ "$(kv "$end" lease_calls)" = 5 ] || fail "$1: $end"
    ! grep -q 'renewed session' "$T/probe.$1" || fail "$1: found by a renew: $(cat "$T/probe.$1")"
    cb_at=$(kv "$end" cb_at)
    [ $((cb_at - t_force)) -lt 5000 ] || fail "$1: the loss took $((cb_at - t_force)) ms"
    LAT=$((cb_at - t_force))
}
follow redis "$REDIS_EV"
r=$LAT
follow kafka "$KAFKA_EV"
pass "a force-ended session heard through Redis after $r ms, through Kafka after $LAT ms (renew timer: 10 s)"
