#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How long after a force release (DELETE /v1/leases/NAME?force=true) a
# holder that follows tenured's --publish target hears of it: the C client
# (libtenure's Redis follower, libtenure-kafka's Kafka follower, through
# tn-ev-loss) and the Python client (bench/py_ev_loss.py), against one
# redis-server and librdkafka's mock cluster (tn-kafka-mock, one
# partition), one tenured publishing every event to both.  Each round runs
# the four followers once, in an order that rotates round by round; each
# holder takes a 30 s lease (its renew timer is 10 s away), waits until its
# follower has fixed its start, and the time from just before the DELETE is
# sent to the holder's loss callback is recorded, and the time from the
# instant tenured logged the revoked event (its at_ms, the same on both
# targets) to that callback (every end reads the wall clock of this
# machine).  Prints per follower the median, p90, p99 (nearest rank) and
# max of each, and each Kafka median over its Redis peer's.
# Environment: ROUNDS (40), KAFKA_CONF (librdkafka "key=value,..." for
# both Kafka followers, to measure a setting against the built-in ones).
# Needs a dev build (build/dev/bin), redis-server, curl, and
# python3-confluent-kafka for the Python Kafka follower (skipped without).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BIN=${TN_BIN:-$root/build/dev/bin}
ROUNDS=${ROUNDS:-40}
WORK=$(mktemp -d /tmp/tenure-bench-follow.XXXXXX)
. "$here/lib.sh" # PIDS, cleanup at exit, free_port, wait_ready
. "$here/servers.sh" # start_redis
# Debian's Python, where python3-confluent-kafka is installed.
PY=${PYTHON:-/usr/bin/python3}
for tool in redis-server redis-cli curl "$PY"; do
    command -v "$tool" >/dev/null || { echo "follower-latency: needs $tool" >&2; exit 2; }
done
for b in tenured tn-ev-loss tn-kafka-mock; do
    [ -x "$BIN/$b" ] || { echo "follower-latency: no $BIN/$b (make build)" >&2; exit 2; }
done
kinds="c-redis c-kafka py-redis py-kafka"
"$PY" -c 'import confluent_kafka' 2>/dev/null || {
    echo "# no python3-confluent-kafka: the Python Kafka follower is left out"
    kinds="c-redis c-kafka py-redis"
}

RPORT=$(free_port)
start_redis "$WORK/redis" "$RPORT" --appendonly no ||
    { echo "follower-latency: redis-server did not start: $(tail -3 "$WORK/redis/log")" >&2; exit 1; }
"$BIN/tn-kafka-mock" lease-events:1 >"$WORK/mock.out" 2>"$WORK/mock.err" &
PIDS+=($!)
for _ in $(seq 1 200); do [ -s "$WORK/mock.out" ] && break; sleep 0.05; done
BROKERS=$(head -1 "$WORK/mock.out")
[ -n "$BROKERS" ] || { echo "follower-latency: the mock cluster did not start" >&2; exit 1; }
declare -A EV=([redis]="redis://127.0.0.1:$RPORT/tenure:events"
    [kafka]="kafka://$BROKERS/lease-events")

TN_SERVER_BIN=$BIN/tenured tn_server_start -d "$WORK/data" -l "$WORK/tenured.log" -- \
    --publish "${EV[redis]}" --publish "${EV[kafka]}" ||
    { echo "follower-latency: $TN_SERVER_ERR" >&2; exit 1; }
URL=${TN_SRV_URL[main]}

# holder KIND NAME: start the holder of NAME in the background (pid in HP).
holder() {
    local lang=${1%%-*} target=${1#*-}
    if [ "$lang" = c ]; then
        TN_KAFKA_CONF=${KAFKA_CONF:-} "$BIN/tn-ev-loss" "$URL" "$2" 30000 \
            "${EV[$target]}" >"$WORK/$2" 2>&1 &
    else
        local ev=${EV[$target]}
        [ "$target" = kafka ] && [ -n "${KAFKA_CONF:-}" ] && ev="$ev?${KAFKA_CONF//,/&}"
        PYTHONPATH="$root/python" "$PY" "$here/py_ev_loss.py" "$URL" "$2" 30000 \
            "$ev" >"$WORK/$2" 2>&1 &
    fi
    HP=$!
    PIDS+=("$HP")
}

# one KIND ROUND: one force release heard by one holder; appends the ms.
one() {
    local name="$1:$2"
    holder "$1" "$name"
    for _ in $(seq 1 400); do grep -qs '^acquired' "$WORK/$name" && break; sleep 0.025; done
    grep -q '^acquired' "$WORK/$name" || { echo "$name: $(cat "$WORK/$name")" >&2; return 1; }
    # The C Redis follower finds the stream's end after its first XREAD;
    # every holder gets the same pause.
    sleep 0.5
    local t0
    t0=$(date +%s%3N)
    curl -s -o /dev/null -X DELETE "$URL/v1/leases/$name?force=true"
    wait "$HP" || true
    local at
    at=$(awk '$1 == "lost" {print $4}' "$WORK/$name")
    [ -n "$at" ] || { echo "$name: $(cat "$WORK/$name")" >&2; return 1; }
    # The revoked event's at_ms (tenured logged it; one value for both
    # targets), from the Redis stream.
    local ev
    ev=$(redis-cli -p "$RPORT" XRANGE tenure:events - + | awk -v n="$name" '
        $0 == "type" { getline; t = $0 } $0 == "name" { getline; nm = $0 }
        $0 == "at_ms" { getline; if (t == "revoked" && nm == n) { print; exit } }')
    [ -n "$ev" ] || { echo "$name: no revoked event in the stream" >&2; return 1; }
    echo "$1 $2 $((at - t0)) $((at - ev))" >>"$WORK/lat"
}

echo "# bench/follower-latency.sh: ROUNDS=$ROUNDS KAFKA_CONF=${KAFKA_CONF:-} $(nproc) cores, $(date -u +%F)"
: >"$WORK/lat"
set -- $kinds
for r in $(seq 1 "$ROUNDS"); do
    for _ in $(seq 1 $(((r - 1) % $#))); do set -- "${@:2}" "$1"; done
    for k in "$@"; do one "$k" "$r"; done
    set -- $kinds
done
stats() { # KIND COLUMN: "median p90 p99 max n"
    awk -v k="$1" -v c="$2" '$1 == k {print $c}' "$WORK/lat" | sort -n | awk '
        { v[NR] = $1 }
        function rank(p) { i = int(p * NR + 0.999999); return v[i < 1 ? 1 : i] }
        END { if (NR) printf "%d %d %d %d %d\n", rank(0.5), rank(0.9), rank(0.99), v[NR], NR }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'; }
for col in 3 4; do
    if [ "$col" = 3 ]; then
        echo "from the DELETE sent to the holder's loss callback:"
    else
        echo "from tenured logging the event (at_ms) to the holder's loss callback:"
    fi
    printf '  %-9s %7s %7s %7s %7s %7s\n' follower median p90 p99 max rounds
    for k in $kinds; do
        set -- $(stats "$k" "$col")
        printf '  %-9s %4s ms %4s ms %4s ms %4s ms %7s\n' "$k" "$1" "$2" "$3" "$4" "$5"
        eval "med_${k//-/_}=$1"
    done
    echo "  kafka / redis (medians): C $(ratio "$med_c_kafka" "$med_c_redis")x" \
        "Python $(ratio "${med_py_kafka:-0}" "$med_py_redis")x"
done
