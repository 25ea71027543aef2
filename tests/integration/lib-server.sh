#!/usr/bin/env bash
# Extra helpers for the tenured tests (t0xx basic, t1xx api, t2xx
# durability).  Source after lib.sh:
#   . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/lib-server.sh"

# CURL_MAX: seconds any single request may take.
CURL_MAX=${CURL_MAX:-10}

# rq METHOD PATH CONTENT_TYPE [BODY] [extra curl args...]: like req, with
# an explicit Content-Type ("-" sends none at all).  Sets CODE, BODY, HDRS.
# Every answer is also recorded in $T/openapi (method and target, header
# block, body; no extra process per request), which tn_cleanup checks
# against docs/openapi.yaml at the end of the test.  TN_OPENAPI_CHECK=0
# turns that off for a test that means to get undescribed answers.
TN_OPENAPI_N=0
rq() {
    local method=$1 path=$2 ct=$3 data=${4-} out rec="" hf=$T/hdrs
    shift 3
    [ $# -gt 0 ] && shift
    if [ "${TN_OPENAPI_CHECK:-1}" = 1 ]; then
        [ -d "$T/openapi" ] || mkdir -p "$T/openapi"
        TN_OPENAPI_N=$((TN_OPENAPI_N + 1))
        printf -v rec '%s/%06d' "$T/openapi" "$TN_OPENAPI_N"
        hf=$rec.hdrs
    fi
    local cth=(-H "Content-Type: $ct")
    [ "$ct" = - ] && cth=(-H 'Content-Type:')
    if [ -n "$data" ]; then
        out=$(curl -s --max-time "$CURL_MAX" -X "$method" "${cth[@]}" \
            --data-binary "$data" -D "$hf" -w '\n%{http_code}' "$@" \
            "$URL$path") || true
    else
        out=$(curl -s --max-time "$CURL_MAX" -X "$method" -D "$hf" \
            -w '\n%{http_code}' "$@" "$URL$path") || true
    fi
    CODE=${out##*$'\n'}
    BODY=${out%$'\n'*}
    [ "$BODY" != "$CODE" ] || BODY=""
    # shellcheck disable=SC2034 # read by the tests
    HDRS=$(tr -d '\r' <"$hf" 2>/dev/null || true)
    if [ -n "$rec" ]; then
        printf '%s' "$BODY" >"$rec.body"
        printf '%s\t%s\n' "$method" "$path" >"$rec.req"
    fi
}

# rj METHOD PATH [BODY]: a JSON request.
rj() { rq "$1" "$2" application/json "${3-}"; }

# enc STRING: percent-encode every byte that is not unreserved (RFC 3986),
# so "a/b" becomes "a%2Fb".
enc() {
    local LC_ALL=C s=$1 i c out=""
    for ((i = 0; i < ${#s}; i++)); do
        c=${s:i:1}
        case $c in
        [A-Za-z0-9._~-]) out+=$c ;;
        *) out+=$(printf '%%%02X' "'$c") ;;
        esac
    done
    printf '%s' "$out"
}

# acquire NAME OWNER TTL [EXTRA_JSON_MEMBERS]: POST /v1/leases.
acquire() {
    local extra=${4:+,$4}
    rj POST /v1/leases "{\"name\":\"$1\",\"owner_id\":\"$2\",\"ttl_ms\":$3$extra}"
}

# renew NAME TOKEN SECRET [TTL]; release NAME TOKEN SECRET.
renew() {
    local ttl=${4:+,\"ttl_ms\":$4}
    rj PATCH "/v1/leases/$(enc "$1")" \
        "{\"token\":$2,\"lease_secret\":\"$3\"$ttl}"
}
release() {
    rj DELETE "/v1/leases/$(enc "$1")" "{\"token\":$2,\"lease_secret\":\"$3\"}"
}
get_lease() { rj GET "/v1/leases/$(enc "$1")"; }
check_token() { rj GET "/v1/leases/$(enc "$1")/check?token=$2"; }

# floor_of NAME: print the floor of NAME (via check).
floor_of() {
    check_token "$1" 0
    expect_code 200 "check $1"
    jget floor
}

# is_json: $BODY is a JSON value.
is_json() { printf "%s" "$BODY" | "$TN_BIN/tn-json-get" . >/dev/null 2>&1; }

# expect_error STATUS CODE WHAT: the response is STATUS with the JSON body
# {"error": CODE, "message": non-empty text}.
expect_error() {
    expect_code "$1" "$3"
    local e m
    e=$(jget error 2>/dev/null) || fail "$3: no \"error\" member in: $BODY"
    [ "$e" = "$2" ] || fail "$3: expected error $2, got '$e' in: $BODY"
    m=$(jget message 2>/dev/null) || fail "$3: no \"message\" in: $BODY"
    [ -n "$m" ] || fail "$3: empty message in: $BODY"
    case $m in \{* | \[*) fail "$3: message is not text: $BODY" ;; esac
}

# expect_int FIELD WHAT: FIELD of $BODY is a JSON integer; prints it.
expect_int() {
    local v
    v=$(jget "$1" 2>/dev/null) || fail "$2: no $1 in: $BODY"
    [[ $v =~ ^-?[0-9]+$ ]] || fail "$2: $1 is not an integer: $BODY"
    printf '%s' "$v"
}

# expect_fields WHAT FIELD...: every FIELD exists in $BODY.
expect_fields() {
    local what=$1 f
    shift
    for f in "$@"; do
        jget "$f" >/dev/null 2>&1 || fail "$what: missing \"$f\" in: $BODY"
    done
}

# expect_no_field WHAT FIELD: FIELD is absent from $BODY.
expect_no_field() {
    if jget "$2" >/dev/null 2>&1; then fail "$1: unexpected \"$2\" in: $BODY"; fi
}

# now_ms: CLOCK_BOOTTIME milliseconds (the clock tenured uses).
now_ms() { "$TN_BIN/tn-hammer" now; }

# sleep_ms N
sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }

# wait_gone NAME [SECONDS]: poll until GET NAME is 404.
wait_gone() {
    local i
    for i in $(seq 1 $((${2:-5} * 50))); do
        get_lease "$1"
        [ "$CODE" = 404 ] && return 0
        sleep 0.02
    done
    fail "lease $1 did not end in time: $CODE $BODY"
}

# tn_restart_server [SIGNAL] [extra tenured args...]: stop tenured with
# SIGNAL (default KILL), wait for it, start it again on the same port and
# data dir with the arguments given (none: none).
tn_restart_server() {
    local sig=${1:-KILL}
    [ $# -gt 0 ] && shift
    tn_server_stop main "$sig"
    tn_start_server "$@"
}

# need_tools: the binaries these tests drive exist.
need_tools() {
    local b
    for b in tenured tn-json-get tn-hammer tn-slowclient; do
        [ -x "$TN_BIN/$b" ] || fail "missing $TN_BIN/$b (build it first)"
    done
}

# tn_safe_port: lib.sh's tn_free_port (below the kernel's ephemeral
# range, where outgoing connections of the load tools cannot take it
# between the check and the bind; not in use in any TCP state).
tn_safe_port() { tn_free_port; }
# The main server's first choice of port (another when it is taken).
PORT=${PORT:-$(tn_free_port)}
TN_PORT_PICKED=$PORT

# lib.sh's cleanup runs under set -e, where killing an already reaped
# tenured (after a restart or a crash test) would end it early with status
# 1; run it with errors tolerated, keeping the script's own exit status.
trap 'set +e; tn_cleanup' EXIT
