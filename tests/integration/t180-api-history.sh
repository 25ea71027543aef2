#!/usr/bin/env bash
# GET /v1/leases/{name}/history: past grants of a name, newest first, with
# owner, age, and how each ended (released, expired, revoked); the live one
# has end null; limit bounds the answer; other names are not mixed in.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools
tn_start_server

acquire "h:1" a 200
t1=$(jget token)
sleep 0.35 # expires
acquire "h:1" b 5000
t2=$(jget token)
s2=$(jget lease_secret)
acquire "h:2" x 5000
release "h:1" "$t2" "$s2"
expect_code 204 "release"
acquire "h:1" c 5000
t3=$(jget token)
rq DELETE "/v1/leases/h:1?force=true" -
expect_code 204 "force release"
acquire "h:1" d 5000
t4=$(jget token)

rj GET "/v1/leases/h:1/history"
expect_code 200 "history"
n=$(printf '%s' "$BODY" | "$TN_BIN/tn-json-get" grants | grep -o '"token"' | wc -l)
[ "$n" = 4 ] || fail "history has $n grants: $BODY"
g() { printf '%s' "$BODY" | "$TN_BIN/tn-json-get" "grants.$1.$2"; }
[ "$(g 0 token)" = "$t4" ] && [ "$(g 0 end)" = null ] && [ "$(g 0 owner_id)" = d ] ||
    fail "newest (live) grant: $BODY"
[ "$(g 1 token)" = "$t3" ] && [ "$(g 1 end)" = revoked ] || fail "revoked grant: $BODY"
[ "$(g 2 token)" = "$t2" ] && [ "$(g 2 end)" = released ] || fail "released grant: $BODY"
[ "$(g 3 token)" = "$t1" ] && [ "$(g 3 end)" = expired ] || fail "expired grant: $BODY"
[ "$(g 3 granted_ms_ago)" -ge "$(g 0 granted_ms_ago)" ] || fail "ages not in order: $BODY"
rj GET "/v1/leases/h:1/history?limit=2"
n=$(printf '%s' "$BODY" | "$TN_BIN/tn-json-get" grants | grep -o '"token"' | wc -l)
[ "$n" = 2 ] || fail "limit=2 gave $n grants: $BODY"
rj GET "/v1/leases/never/history"
expect_code 200 "history of a name never granted"
[ "$(jget grants)" = "[]" ] || fail "never-granted name: $BODY"
rj GET "/v1/leases/h:1/history?limit=0"
expect_error 400 bad_request "limit=0"
pass "history: newest first, released/expired/revoked, live has end null, limit"
