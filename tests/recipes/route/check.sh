# shellcheck shell=bash disable=SC2034
# The route recipe (docs/CONTRIBUTING.md "An endpoint"): sourced by run.sh
# (see store/check.sh).  The answers rq records are checked against the
# copy's docs/openapi.yaml when the script ends.
recipe_targets="tenured test_route"
recipe_check() {
    "$RB/test_route" >"$T/route.log" 2>&1 ||
        fail "route: test_route (routes.def against docs/openapi.yaml): $(grep -E 'FAIL|rror' "$T/route.log" | head -5)"
    tn_start_server
    rj POST /v1/leases '{"name":"a","owner_id":"w","ttl_ms":60000}'
    [ "$CODE" = 201 ] || fail "route: acquire: $CODE $BODY"
    rq GET /v1/leases/a/floor -
    [ "$CODE" = 200 ] && [ "$BODY" = '{"name":"a","floor":1}' ] ||
        fail "route: GET /v1/leases/a/floor: $CODE $BODY"
    rq GET /v1/leases/never/floor -
    [ "$CODE" = 200 ] && [ "$BODY" = '{"name":"never","floor":0}' ] ||
        fail "route: GET /v1/leases/never/floor: $CODE $BODY"
    rq POST /v1/leases/a/floor -
    [ "$CODE" = 405 ] && grep -qi '^allow: GET' <<<"$HDRS" ||
        fail "route: POST /v1/leases/a/floor: $CODE $HDRS"
    grep -q 'route="floor"' <<<"$(curl -s "$URL/metrics")" ||
        fail "route: no route=\"floor\" in /metrics"
    kill "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null || true
    pass "route: GET /v1/leases/{name}/floor answers the floor (1 after a grant, 0 never granted), 405 with Allow for POST, counted as route=\"floor\"; test_route finds it in docs/openapi.yaml"
}
