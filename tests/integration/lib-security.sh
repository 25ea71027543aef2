#!/usr/bin/env bash
# Helpers for the t9xx security tests (CONTRACT §9).  Source after lib.sh and
# lib-server.sh:
#   . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/lib-server.sh"
#   . "$(dirname "$0")/lib-security.sh"

# sec_need_auth_flag: tests of the auth need tenured --auth-file.  (The
# help text is read whole before grep: `--help | grep -q` under pipefail
# fails whenever grep exits before tenured has written its last line.)
sec_need_auth_flag() {
    [ -x "$TN_BIN/tenured" ] || fail "missing $TN_BIN/tenured (build it first)"
    local help
    help=$("$TN_BIN/tenured" --help 2>&1) || fail "tenured --help exited $?"
    grep -q -- --auth-file <<<"$help" || fail "tenured --help does not list --auth-file"
}

# sec_new_token: a fresh random bearer token (URL-safe base64 alphabet).
sec_new_token() {
    head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n'
}

# sec_sha TOKEN: the token_sha256 of TOKEN, made the documented way.
sec_sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }

# The principals of the default file, one token each:
#   indexer, other: acquire+read on "shard:"
#   reader:         read on "shard:"
#   cfgreader:      read on "cfg/"
#   ops:            admin
TOK_INDEXER=$(sec_new_token)
TOK_OTHER=$(sec_new_token)
TOK_READER=$(sec_new_token)
TOK_CFG=$(sec_new_token)
TOK_OPS=$(sec_new_token)

# sec_principal NAME TOKEN RULES_JSON: one principal object.
sec_principal() {
    printf '{"name": "%s", "token_sha256": "%s", "allow": %s}' \
        "$1" "$(sec_sha "$2")" "$3"
}

# sec_write_auth FILE: the default auth file.
sec_write_auth() {
    local shard='[{"prefix": "shard:", "actions": ["acquire", "read"]}]'
    {
        printf '{"principals": [\n'
        sec_principal indexer "$TOK_INDEXER" "$shard"
        printf ',\n'
        sec_principal other "$TOK_OTHER" "$shard"
        printf ',\n'
        sec_principal reader "$TOK_READER" \
            '[{"prefix": "shard:", "actions": ["read"]}]'
        printf ',\n'
        sec_principal cfgreader "$TOK_CFG" \
            '[{"prefix": "cfg/", "actions": ["read"]}]'
        printf ',\n{"name": "ops", "token_sha256": "%s", "admin": true}\n]}\n' \
            "$(sec_sha "$TOK_OPS")"
    } >"$1.tmp"
    chmod 600 "$1.tmp"
    mv "$1.tmp" "$1"
}

# areq TOKEN METHOD PATH [BODY]: a JSON request with "Authorization: Bearer
# TOKEN" ("-" sends no Authorization header).  Sets CODE, BODY, HDRS.
areq() {
    local tok=$1 method=$2 path=$3 body=${4-}
    if [ "$tok" = - ]; then
        rq "$method" "$path" application/json "$body"
    else
        rq "$method" "$path" application/json "$body" \
            -H "Authorization: Bearer $tok"
    fi
}

# as_acquire TOKEN NAME OWNER TTL: POST /v1/leases as TOKEN.
as_acquire() {
    areq "$1" POST /v1/leases \
        "{\"name\":\"$2\",\"owner_id\":\"$3\",\"ttl_ms\":$4}"
}
# as_renew / as_release TOKEN NAME LEASE_TOKEN SECRET
as_renew() {
    areq "$1" PATCH "/v1/leases/$(enc "$2")" \
        "{\"token\":$3,\"lease_secret\":\"$4\"}"
}
as_release() {
    areq "$1" DELETE "/v1/leases/$(enc "$2")" \
        "{\"token\":$3,\"lease_secret\":\"$4\"}"
}
# as_force TOKEN NAME: admin force release.
as_force() { areq "$1" DELETE "/v1/leases/$(enc "$2")?force=true" ""; }
as_get() { areq "$1" GET "/v1/leases/$(enc "$2")"; }

# expect_unauth WHAT / expect_forbidden WHAT: the documented shapes.
expect_unauth() { expect_error 401 unauthorized "$1"; }
expect_forbidden() { expect_error 403 forbidden "$1"; }

# --- one raw keep-alive connection, to show a connection survives events
# raw_open: connect RAW_FD to tenured.
raw_open() {
    exec {RAW_FD}<>"/dev/tcp/127.0.0.1/$PORT" || fail "raw connect to $PORT"
}

# raw_get PATH TOKEN: one GET on RAW_FD (HTTP/1.1, keep-alive); sets
# RAW_CODE and RAW_BODY.  Fails the test if the connection is gone.
raw_get() {
    local LC_ALL=C line len=0 k v
    printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n' \
        "$1" "$2" 1>&"$RAW_FD" || fail "raw connection closed (write)"
    IFS= read -r -t 5 line <&"$RAW_FD" || fail "raw connection closed (status)"
    # shellcheck disable=SC2034 # read by the tests
    RAW_CODE=$(printf '%s' "$line" | cut -d' ' -f2)
    while IFS= read -r -t 5 line <&"$RAW_FD"; do
        line=${line%$'\r'}
        [ -z "$line" ] && break
        k=${line%%:*}
        v=${line#*:}
        v=${v# }
        case ${k,,} in content-length) len=$v ;; esac
    done
    # shellcheck disable=SC2034 # read by the tests
    RAW_BODY=""
    if [ "$len" -gt 0 ]; then
        # shellcheck disable=SC2034 # read by the tests
        IFS= read -r -t 5 -N "$len" RAW_BODY <&"$RAW_FD" ||
            fail "raw connection closed (body)"
    fi
}

raw_close() { exec {RAW_FD}>&-; }
