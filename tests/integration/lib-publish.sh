#!/usr/bin/env bash
# Helpers for the --publish tests (t62x).  Source after lib.sh.

# pub_start_redis: a real redis-server on a free port in $T/redis (no
# persistence: the tests judge what reached it while it ran); sets
# REDIS_PORT, REDIS_PID.
pub_start_redis() {
    command -v redis-server >/dev/null || { echo "SKIP: no redis-server (scripts/deps.sh)"; exit 77; }
    REDIS_PORT=$(tn_free_port)
    mkdir -p "$T/redis"
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$T/redis" >"$T/redis.log" 2>&1 &
    REDIS_PID=$!
    TN_PIDS+=("$REDIS_PID")
    local i
    for i in $(seq 1 100); do
        redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && return 0
        sleep 0.05
    done
    fail "redis-server did not start: $(tail -3 "$T/redis.log")"
}

# pub_start_target TARGET: the target of a test that runs once per target
# ("# runs: redis kafka"): redis, a redis-server (S: the stream
# tenure:events), or kafka, librdkafka's mock cluster with one partition of
# lease-events (skip, 77, without kcat, which reads it; needs
# lib-fence.sh); sets PUB_URL, the URL for --publish.
pub_start_target() {
    case $1 in
    redis)
        pub_start_redis
        S=tenure:events
        PUB_URL="redis://127.0.0.1:$REDIS_PORT/$S"
        ;;
    kafka)
        command -v kcat >/dev/null || { echo "SKIP: no kcat (scripts/deps.sh)"; exit 77; }
        fence_start_mock lease-events:1
        PUB_URL="kafka://$BROKERS/lease-events"
        ;;
    *) fail "unknown target '$1' (redis or kafka)" ;;
    esac
}

rcli() { redis-cli -p "$REDIS_PORT" "$@"; }

# pub_dump STREAM: one line per entry, "id type name owner_id token floor",
# in stream order (duplicates included).
pub_dump() {
    rcli XRANGE "$1" - + | awk '
        NR % 15 == 1 { n = 0; next }
        { n++; if (n % 2) k = $0; else v[k] = $0 }
        NR % 15 == 0 { print v["id"], v["type"], (v["name"] == "" ? "-" : v["name"]),
                       (v["owner_id"] == "" ? "-" : v["owner_id"]), v["token"], v["floor"] }'
}

# pub_metric NAME: the value of NAME (first series) on $URL/metrics.
pub_metric() { curl -s --max-time 2 "$URL/metrics" | awk -v m="$1" 'index($1, m "{") == 1 || $1 == m {print $2; exit}'; }

# pub_wait_grants FILE: until tn-hammer has written some grants to FILE
# (it starts slowly on a busy machine, or under a sanitizer).
pub_wait_grants() {
    for _ in $(seq 1 400); do
        [ "$(grep -c '^grant' "$1" 2>/dev/null || true)" -gt 20 ] && return 0
        sleep 0.05
    done
    fail "tn-hammer wrote no grants to $1"
}

# pub_wait_expired: until every lease has expired, so that its expiry is
# in the log (after a load of short leases, before pub_wait_caught_up).
pub_wait_expired() { tn_wait_metric tenure_leases_live 0 "every lease expired"; }

# pub_wait_caught_up: until every target has sent the whole log (bounded).
pub_wait_caught_up() {
    local i lag
    for i in $(seq 1 600); do
        lag=$(pub_metric tenure_publish_lag_events)
        [ "$lag" = 0 ] && return 0
        sleep 0.05
    done
    fail "publisher never caught up (lag $lag)"
}

# pub_check DUMP GRANTS [RESETS]: the stream in DUMP (pub_dump output)
# holds no id with two different events, and, after dropping repeated ids
# (at least once), ids in increasing
# order with no gap, every grant of tn-hammer's GRANTS file as an
# "acquired" event with its token, and exactly RESETS reset records
# (default 0).  Prints a summary.
pub_check() {
    local dump=$1 grants=$2 resets=${3:-0}
    awk '($1 in first) && first[$1] != $0 { printf "id %s carries two events: %s / %s\n", $1, first[$1], $0; exit 1 }
         !($1 in first) { first[$1] = $0 }' "$dump" >"$T/dup" || fail "$(cat "$T/dup")"
    awk '!seen[$1]++' "$dump" >"$dump.uniq"
    awk 'NR > 1 && $1 != prev + 1 { printf "gap or disorder: %s after %s\n", $1, prev; bad = 1; exit }
         { prev = $1 } END { exit bad }' "$dump.uniq" >"$T/gap" || fail "$(cat "$T/gap")"
    awk '$1 == "grant" { print $2, $4 }' "$grants" | sort >"$T/acked"
    awk '$2 == "acquired" { print $3, $5 }' "$dump.uniq" | sort >"$T/published"
    local missing
    missing=$(comm -23 "$T/acked" "$T/published" | head -5)
    [ -z "$missing" ] || fail "grants a client was told of are missing from the stream: $missing"
    local got
    got=$(awk '$2 == "reset"' "$dump.uniq" | wc -l)
    [ "$got" = "$resets" ] || fail "expected $resets reset records, got $got: $(awk '$2 == "reset"' "$dump.uniq" | head -3)"
    echo "$(wc -l <"$dump") entries, $(wc -l <"$dump.uniq") distinct ids $(head -1 "$dump.uniq" | cut -d' ' -f1)..$(tail -1 "$dump.uniq" | cut -d' ' -f1), $(wc -l <"$T/acked") acknowledged grants all present, $got resets"
}

# pub_dump_kafka TOPIC: like pub_dump, from a Kafka topic (one partition:
# the order is the stream's).
pub_dump_kafka() {
    kcat -C -b "$BROKERS" -t "$1" -e -q -f '%s\n' 2>/dev/null | sed -E \
        's/^\{"id":([0-9]+),"type":"([a-z]+)","name":"([^"]*)","owner_id":"([^"]*)","token":([0-9]+),"floor":([0-9]+).*/\1 \2 \3 \4 \5 \6/' |
        awk '{ if ($3 == "") $3 = "-"; print }'
}

# pub_tls_certs: in $T/tls a CA (ca.pem), a server certificate for
# 127.0.0.1 and localhost (server.pem/server.key), a client certificate
# (client.pem/client.key), and a second, unrelated CA (other-ca.pem).
pub_tls_certs() {
    local d=$T/tls
    mkdir -p "$d"
    (
        cd "$d" || exit 1
        for ca in ca other-ca; do
            openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=test $ca" \
                -keyout $ca.key -out $ca.pem 2>/dev/null || exit 1
        done
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext
        for who in server client; do
            openssl req -newkey rsa:2048 -nodes -subj "/CN=$who" -keyout $who.key \
                -out $who.csr 2>/dev/null || exit 1
            openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
                -days 2 -extfile san.ext -out $who.pem 2>/dev/null || exit 1
        done
    ) || fail "openssl could not make the test certificates"
}

# pub_start_rediss: a real redis-server speaking only TLS (client
# certificates required) on a free port, certificates from pub_tls_certs;
# sets REDIS_PORT, REDIS_PID.  rcli then speaks TLS too.
pub_start_rediss() {
    command -v redis-server >/dev/null || { echo "SKIP: no redis-server (scripts/deps.sh)"; exit 77; }
    pub_tls_certs
    REDIS_PORT=$(tn_free_port)
    mkdir -p "$T/redis"
    redis-server --port 0 --tls-port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
        --tls-cert-file "$T/tls/server.pem" --tls-key-file "$T/tls/server.key" \
        --tls-ca-cert-file "$T/tls/ca.pem" --tls-auth-clients yes \
        --dir "$T/redis" >"$T/redis.log" 2>&1 &
    REDIS_PID=$!
    TN_PIDS+=("$REDIS_PID")
    rcli() { redis-cli --tls --cacert "$T/tls/ca.pem" --cert "$T/tls/client.pem" \
        --key "$T/tls/client.key" -p "$REDIS_PORT" "$@"; }
    local i
    for i in $(seq 1 100); do
        rcli ping 2>/dev/null | grep -q PONG && return 0
        sleep 0.05
    done
    fail "redis-server (TLS) did not start: $(tail -3 "$T/redis.log")"
}
