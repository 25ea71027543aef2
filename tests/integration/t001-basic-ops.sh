#!/usr/bin/env bash
# tenured basics: --help, /healthz, /readyz, /metrics (Prometheus text),
# unknown paths (404 not_found) and wrong methods (405 method_not_allowed),
# every non-metrics answer being JSON.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools

help=$("$TN_BIN/tenured" --help 2>&1) || fail "tenured --help exited non-zero"
for flag in --listen --data-dir; do
    grep -q -- "$flag" <<<"$help" || fail "--help does not mention $flag"
done
pass "tenured --help"

tn_start_server

rj GET /healthz
expect_code 200 "healthz"
is_json || fail "healthz body is not JSON: $BODY"
rj GET /readyz
expect_code 200 "readyz"
is_json || fail "readyz body is not JSON: $BODY"
pass "healthz and readyz"

# Some traffic, so that counters have moved.
acquire "ops:1" o1 120000 # outlives the whole test, however slow
expect_code 201 "acquire"
rj GET /metrics
expect_code 200 "metrics"
grep -qi '^content-type: text/plain' <<<"$HDRS" ||
    fail "metrics Content-Type is not text/plain: $HDRS"
samples=$(grep -Ec '^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eEInfa]+( [0-9]+)?$' <<<"$BODY" || true)
[ "$samples" -ge 1 ] || fail "metrics has no Prometheus sample line: $BODY"
grep -Eq '^# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge|histogram|summary|untyped)$' <<<"$BODY" ||
    fail "metrics has no # TYPE line: $BODY"
# Every line is a comment, a sample, or empty.
bad=$(grep -Ev '^(#.*|[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eEInfa]+( [0-9]+)?|)$' <<<"$BODY" || true)
[ -z "$bad" ] || fail "metrics lines not in Prometheus text format: $bad"
pass "metrics in Prometheus text format ($samples samples)"

for p in /nope /v1 /v2/leases /v1/leasesx /v1/leases/ops%3A1/nope \
    /v1/leases/a/b /v1/leases/a/check/x /healthz/x; do
    rj GET "$p"
    expect_error 404 not_found "GET $p"
done
pass "unknown paths are 404 not_found"

# Each 405 names the methods the path does take (RFC 9110: Allow is a MUST).
for mp in "PUT /v1/leases:GET POST" "DELETE /v1/leases:GET POST" \
    "PATCH /v1/leases:GET POST" "POST /v1/leases/ops%3A1:GET PATCH DELETE" \
    "PUT /v1/leases/ops%3A1:GET PATCH DELETE" \
    "POST /v1/leases/ops%3A1/check:GET" "DELETE /v1/leases/ops%3A1/check:GET" \
    "POST /healthz:GET" "DELETE /readyz:GET" "POST /metrics:GET"; do
    req_line=${mp%%:*}
    rj ${req_line% *} "${req_line#* }" '{}'
    expect_error 405 method_not_allowed "$req_line"
    allow=$(sed -n 's/^[Aa]llow: *//p' <<<"$HDRS")
    for m in ${mp#*:}; do
        grep -qw "$m" <<<"$allow" ||
            fail "$req_line: 405 without $m in its Allow header ('$allow')"
    done
done
pass "wrong methods are 405 method_not_allowed, with Allow"

# The lease acquired above was not disturbed by any of that.
get_lease "ops:1"
expect_code 200 "lease after bad requests"
expect_field owner_id o1
