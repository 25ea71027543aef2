#!/usr/bin/env bash
# HTTPS and mutual TLS: tenured serves HTTPS with --tls-cert/--tls-key;
# curl and the tenure CLI verify it with the CA; plain HTTP to the TLS port
# gets no answer.  With --tls-client-ca a verified client certificate's CN
# names the principal of the auth file: its prefix rules apply, a client
# without a certificate (or with one from another CA) gets 401.
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || fail "openssl is not installed (scripts/deps.sh)"
P="$T/pki"
mkdir -p "$P"
mkcert() { # NAME CN ISSUER(or "self") [SAN]
    local name=$1 cn=$2 issuer=$3 san=${4:-}
    openssl req -newkey rsa:2048 -nodes -keyout "$P/$name.key" \
        -subj "/CN=$cn" -out "$P/$name.csr" 2>/dev/null
    local ext="$P/$name.ext"
    : >"$ext"
    [ -n "$san" ] && echo "subjectAltName=$san" >"$ext"
    if [ "$issuer" = self ]; then
        echo "basicConstraints=critical,CA:TRUE" >>"$ext"
        echo "keyUsage=keyCertSign,cRLSign" >>"$ext"
        openssl x509 -req -in "$P/$name.csr" -signkey "$P/$name.key" \
            -days 2 -extfile "$ext" -out "$P/$name.pem" 2>/dev/null
    else
        openssl x509 -req -in "$P/$name.csr" -CA "$P/$issuer.pem" \
            -CAkey "$P/$issuer.key" -CAcreateserial -days 2 \
            -extfile "$ext" -out "$P/$name.pem" 2>/dev/null
    fi
}
mkcert ca "tenure test CA" self
mkcert other-ca "another CA" self
mkcert server 127.0.0.1 ca "IP:127.0.0.1"
mkcert indexer indexer ca
mkcert stranger indexer other-ca

tn_server_start -c "$P/ca.pem" -d "$T/data" -l "$T/tenured.log" -- \
    --tls-cert "$P/server.pem" --tls-key "$P/server.key" || fail "HTTPS: $TN_SERVER_ERR"
tn_main_vars
code=$(curl -s --cacert "$P/ca.pem" -o /dev/null -w '%{http_code}' \
    -d '{"name":"tls:1","owner_id":"o","ttl_ms":5000}' "$URL/v1/leases")
[ "$code" = 201 ] || fail "acquire over HTTPS: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$PORT/readyz" || true)
[ "$code" != 200 ] || fail "plain HTTP answered on the TLS port"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$URL/readyz" || true)
[ "$code" = 000 ] || fail "an unverified server certificate was accepted: $code"
out=$("$TN_BIN/tenure" --server "$URL" --cacert "$P/ca.pem" acquire tls:2 --ttl 5s --json) ||
    fail "tenure acquire over HTTPS failed: $out"
pass "HTTPS: curl and the tenure CLI with the CA; plain HTTP refused"
tn_server_stop main

# Mutual TLS with an auth file: the CN "indexer" is the principal.
cat >"$T/auth.json" <<EOF2
{"principals": [{"name": "indexer", "token_sha256": "$(printf %s unused-token | sha256sum | cut -d' ' -f1)",
  "allow": [{"prefix": "shard:", "actions": ["acquire", "read"]}]}]}
EOF2
chmod 600 "$T/auth.json"
tn_server_start -p "$PORT" -c "$P/ca.pem" -d "$T/data" -l "$T/tenured.log" -- \
    --tls-cert "$P/server.pem" --tls-key "$P/server.key" \
    --tls-client-ca "$P/ca.pem" --auth-file "$T/auth.json" || fail "mutual TLS: $TN_SERVER_ERR"
tn_main_vars
mt() { curl -s --cacert "$P/ca.pem" -o "$T/body" -w '%{http_code}' "$@"; }
code=$(mt --cert "$P/indexer.pem" --key "$P/indexer.key" \
    -d '{"name":"shard:1","owner_id":"o","ttl_ms":5000}' "$URL/v1/leases")
[ "$code" = 201 ] || fail "mutual TLS acquire inside the prefix: $code $(cat "$T/body")"
code=$(mt --cert "$P/indexer.pem" --key "$P/indexer.key" \
    -d '{"name":"other:1","owner_id":"o","ttl_ms":5000}' "$URL/v1/leases")
[ "$code" = 403 ] || fail "mutual TLS acquire outside the prefix: $code $(cat "$T/body")"
code=$(mt -d '{"name":"shard:2","owner_id":"o","ttl_ms":5000}' "$URL/v1/leases")
[ "$code" = 401 ] || fail "no client certificate: $code $(cat "$T/body")"
grep -q '"error":"unauthorized"' "$T/body" || fail "401 body: $(cat "$T/body")"
code=$(mt --cert "$P/stranger.pem" --key "$P/stranger.key" \
    -d '{"name":"shard:3","owner_id":"o","ttl_ms":5000}' "$URL/v1/leases" || true)
[ "$code" != 201 ] || fail "a certificate from another CA was accepted"
out=$("$TN_BIN/tenure" --server "$URL" --cacert "$P/ca.pem" --cert "$P/indexer.pem" \
    --key "$P/indexer.key" acquire shard:4 --ttl 5s --json) ||
    fail "tenure acquire with a client certificate failed: $out"
pass "mutual TLS: the certificate CN is the principal; others get 401"

# A browser presents its client certificate to any page's request by
# itself: a state change from a page of another origin is refused even
# with a valid certificate (issue #36, 2026-12-07, docs/SECURITY.md "Browsers"); the
# server's own origin (https) is served, and with authentication on any
# Host name is (a rebound name fails the TLS certificate check anyway).
code=$(mt --cert "$P/indexer.pem" --key "$P/indexer.key" -H "Origin: http://evil.example" \
    -d '{"name":"shard:web","owner_id":"o","ttl_ms":5000}' "$URL/v1/leases")
[ "$code" = 403 ] || fail "mutual TLS acquire from a foreign origin: $code $(cat "$T/body")"
code=$(mt --cert "$P/indexer.pem" --key "$P/indexer.key" -H "Origin: http://127.0.0.1:$PORT" \
    -d '{"name":"shard:web","owner_id":"o","ttl_ms":5000}' "$URL/v1/leases")
[ "$code" = 403 ] || fail "mutual TLS acquire from the http:// origin of an https server: $code"
code=$(mt --cert "$P/indexer.pem" --key "$P/indexer.key" -H "Origin: https://127.0.0.1:$PORT" \
    -H "Host: tenure.example:$PORT" \
    -d '{"name":"shard:web","owner_id":"o","ttl_ms":5000}' "$URL/v1/leases")
[ "$code" = 403 ] || fail "an Origin that is not the request's Host: $code $(cat "$T/body")"
code=$(mt --cert "$P/indexer.pem" --key "$P/indexer.key" -H "Origin: https://tenure.example:$PORT" \
    -H "Host: tenure.example:$PORT" \
    -d '{"name":"shard:web","owner_id":"o","ttl_ms":5000}' "$URL/v1/leases")
[ "$code" = 201 ] || fail "mutual TLS acquire from the server's own origin: $code $(cat "$T/body")"
pass "mutual TLS: state changes from foreign origins refused, the server's own served"
