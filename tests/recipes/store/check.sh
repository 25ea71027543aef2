# shellcheck shell=bash disable=SC2034
# The store recipe (docs/CONTRIBUTING.md "A store backend"): sourced by
# run.sh, which builds recipe_targets in the copy and then calls
# recipe_check with RB naming its bin directory.
recipe_targets="tenured tn-store-contract"
recipe_check() {
    grep -qx demo <<<"$("$RB/tn-store-contract" --list)" ||
        fail "store: tn-store-contract --list does not show demo"
    grep -q 'contract/demo$' <<<"$(ctest --test-dir "$R/build" -N -R '^contract/')" ||
        fail "store: ctest has no contract/demo"
    local out
    out=$("$RB/tn-store-contract" demo 2>&1) &&
        fail "store: the skeleton passed the contract suite"
    grep -q '^FAIL demo/grant_fields$' <<<"$out" ||
        fail "store: no FAIL demo/grant_fields: $(tail -5 <<<"$out")"
    grep -q '^skip demo/wait_fifo: the store does not declare caps.waits$' <<<"$out" ||
        fail "store: wait_fifo not skipped: $(tail -5 <<<"$out")"
    pass "store: tn-store-contract --list shows demo, ctest has contract/demo, which fails demo/grant_fields and skips demo/wait_fifo"

    out=$("$RB/tenured" --store nosuch:// --data-dir "$T/nosuch" 2>&1) &&
        fail "store: tenured started on an unknown store"
    grep -q 'demo://' <<<"$out" || fail "store: the unknown store's error does not list demo://: $out"
    tn_start_server --store demo://x
    grep -q 'store=demo' "$T/tenured.log" || fail "store: no store=demo in the log"
    rj POST /v1/leases '{"name":"a","owner_id":"w","ttl_ms":1000}'
    [ "$CODE" = 503 ] && grep -qi '^retry-after:' <<<"$HDRS" ||
        fail "store: acquire on the skeleton: $CODE $BODY"
    kill "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null || true
    pass "store: tenured --store demo://x logs store=demo and answers 503 with Retry-After; an unknown --store lists demo://"
}
