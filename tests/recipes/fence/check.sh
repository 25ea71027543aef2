# shellcheck shell=bash disable=SC2034
# The fence backend recipe (docs/CONTRIBUTING.md "A fence backend"):
# sourced by run.sh (see store/check.sh).
recipe_targets="tenure tenure_pg tenure_kafka test_fence_demo"
recipe_check() {
    "$RB/test_fence_demo" >"$T/fence.log" 2>&1 ||
        fail "fence: test_fence_demo: $(tail -5 "$T/fence.log")"
    grep -q 'PASSED.*3 test' "$T/fence.log" || fail "fence: $(tail -3 "$T/fence.log")"
    grep -qw tn_fence_demo_ops <<<"$(nm -D --defined-only "$R/build/lib/libtenure.so")" ||
        fail "fence: libtenure.so does not export tn_fence_demo_ops"
    "$R/src/scripts/check-exports.sh" "$R/build/lib" >"$T/exports.log" 2>&1 ||
        fail "fence: check-exports: $(cat "$T/exports.log")"
    pass "fence: test_fence_demo passes its 3 cases; libtenure exports tn_fence_demo_ops and what include/tenure declares"
}
