#!/usr/bin/env bash
# rediss://: tenured --publish and libtenure's follower reach a real
# redis-server that speaks only TLS and requires client certificates
# (certificates made by openssl here).  Every event arrives in order with
# no gap; a holder following the stream over TLS hears of a force release;
# a server certificate from another CA, or one that does not name the
# host asked for (tls_sni), is refused and nothing is sent; tls_verify=0
# skips the checks; TLS options on a plain redis:// URL are refused at
# start.  The publisher reads the URL as the follower does (one parser,
# common/redis_url.c): it takes the same ?tls_KEY=VALUE query, and a
# refused URL's password (one holding an '@') never shows in the error.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-publish.sh"

pub_start_rediss
C=$T/tls
CLIENT=(--publish-opt "redis.tls_cert=$C/client.pem" --publish-opt "redis.tls_key=$C/client.key")

# start N ARGS...: a fresh tenured (own data dir) with ARGS.
start() {
    [ -n "${SERVER_PID:-}" ] && { kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; }
    PORT=$(tn_free_port)
    TN_DATA_DIR=$T/data$1
    shift
    : >"$T/tenured.log"
    tn_start_server "$@"
}

# 1. Verified TLS with a client certificate: complete, ordered, no gap.
start 1 --publish "rediss://127.0.0.1:$REDIS_PORT/s1" --publish-maxlen 0 \
    --publish-opt "redis.tls_ca=$C/ca.pem" "${CLIENT[@]}"
"$TN_BIN/tn-hammer" load --url "$URL" --conns 4 --out "$T/g1" --names 100 --ttl-min 100 \
    --ttl-max 300 --count 1000 --duration-ms 60000 2>>"$T/hammer.log" ||
    fail "load: $(tail -2 "$T/hammer.log")"
pub_wait_expired
pub_wait_caught_up
[ "$(pub_metric tenure_publish_up)" = 1 ] || fail "target not up over TLS: $(tail -3 "$T/tenured.log")"
pub_dump s1 >"$T/d1"
r=$(pub_check "$T/d1" "$T/g1")
pass "rediss:// with a CA file and a client certificate: $r"

# 2. The follower over TLS (options in the URL's query).
EV="rediss://127.0.0.1:$REDIS_PORT/s1?tls_ca=$C/ca.pem&tls_cert=$C/client.pem&tls_key=$C/client.key"
"$TN_BIN/tn-ev-loss" "$URL" fr:1 30000 "$EV" >"$T/fr" 2>&1 &
PROBE=$!
TN_PIDS+=("$PROBE")
for _ in $(seq 1 200); do grep -q '^acquired' "$T/fr" && break; sleep 0.05; done
grep -q '^acquired' "$T/fr" || fail "tn-ev-loss did not acquire: $(cat "$T/fr")"
sleep 0.5 # its follower has found where the stream ends
curl -s -o /dev/null -X DELETE "$URL/v1/leases/fr:1?force=true"
wait "$PROBE" || fail "tn-ev-loss: $(cat "$T/fr")"
set -- $(sed -n 2p "$T/fr")
[ "$1" = lost ] && [ "$2" -lt 10000 ] || fail "the holder never heard of the force release over TLS: $(cat "$T/fr")"
pass "a holder following rediss:// heard of a force release ($2 ms after acquiring; renew timer 10 s)"
"$TN_BIN/tn-ev-loss" "$URL" bad:1 30000 "rediss://127.0.0.1:$REDIS_PORT/s1?tls_bogus=1" >"$T/bad" 2>&1 &&
    fail "an unknown TLS key in events_url was accepted"
grep -q "events_url" "$T/bad" || fail "no clear error for a bad events_url: $(cat "$T/bad")"
pass "an unknown TLS key in events_url is refused: $(cat "$T/bad")"

# refused N STREAM WHAT ARGS...: a tenured with ARGS grants, but nothing
# reaches STREAM, the target stays down, and the log says why.
refused() {
    local n=$1 s=$2 what=$3
    shift 3
    start "$n" --publish "rediss://127.0.0.1:$REDIS_PORT/$s" "$@"
    acquire "r$n" o 5000 # a grant to send
    for _ in $(seq 1 100); do grep -q certificate "$T/tenured.log" && break; sleep 0.05; done
    grep -q "certificate" "$T/tenured.log" || fail "$what: no certificate error logged: $(tail -3 "$T/tenured.log")"
    [ "$(pub_metric tenure_publish_up)" = 0 ] || fail "$what: target reported up"
    [ "$(rcli XLEN "$s")" = 0 ] || fail "$what: events reached the stream"
    pass "$what is refused: $(grep -o 'certificate[^"]*' "$T/tenured.log" | head -1)"
}
refused 2 s2 "a server certificate from another CA" --publish-opt "redis.tls_ca=$C/other-ca.pem" "${CLIENT[@]}"
refused 3 s3 "a server certificate that does not name tls_sni" --publish-opt "redis.tls_ca=$C/ca.pem" \
    --publish-opt redis.tls_sni=wrong.example "${CLIENT[@]}"

# 4. tls_verify=0: no CA needed (and no check made).
start 4 --publish "rediss://127.0.0.1:$REDIS_PORT/s4" --publish-opt redis.tls_verify=0 "${CLIENT[@]}"
acquire v4 o 5000
pub_wait_caught_up
[ "$(rcli XLEN s4)" -ge 1 ] || fail "tls_verify=0: nothing reached the stream"
pass "redis.tls_verify=0 connects without a CA file"

# 4b. The publisher takes the follower's URL as it is, TLS query included.
start 6 --publish "rediss://127.0.0.1:$REDIS_PORT/s6?tls_ca=$C/ca.pem&tls_cert=$C/client.pem&tls_key=$C/client.key"
acquire q6 o 5000
pub_wait_caught_up
[ "$(rcli XLEN s6)" -ge 1 ] || fail "rediss:// with the TLS options in its query: nothing reached the stream: $(tail -3 "$T/tenured.log")"
pass "tenured --publish takes the follower's rediss://...?tls_ca=...&tls_cert=...&tls_key=... URL"

# 5. TLS options on redis:// are a start-up error, not silently plain.
kill -TERM "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=
out=$("$TN_BIN/tenured" --listen "127.0.0.1:$(tn_free_port)" --data-dir "$T/data5" \
    --publish "redis://127.0.0.1:$REDIS_PORT/s5" --publish-opt "redis.tls_ca=$C/ca.pem" 2>&1) &&
    fail "tenured started with redis.tls_ca on a redis:// URL"
echo "$out" | grep -q "rediss://" || fail "no clear error for TLS options on redis://: $out"
pass "TLS options on a redis:// URL stop tenured at start: $(echo "$out" | grep -m1 "rediss")"

# 6. A refused URL is named without its userinfo, up to the last '@': a
# password may hold one.
out=$("$TN_BIN/tenured" --listen "127.0.0.1:$(tn_free_port)" --data-dir "$T/data7" \
    --publish "http://alice:sekr@et9@127.0.0.1:$REDIS_PORT/s7" 2>&1) &&
    fail "tenured started with an http:// publish URL"
echo "$out" | grep -q "redis://" || fail "no clear error for an http:// publish URL: $out"
! echo "$out" | grep -qE "sekr|et9|alice" || fail "the refused URL's userinfo is shown: $out"
pass "a refused publish URL is named without its userinfo: $(echo "$out" | grep -m1 "redis://")"
