#!/usr/bin/env bash
# not under the sanitizers: the spin model, no C of ours
# SPDX-License-Identifier: MIT
# The Promela model of acquire, renew, expiry, crash, holder pause, claim
# and fence (tests/model/tenure.pml), checked exhaustively with spin: the
# correct model has no violation and no invalid end state; each planted bug
# (negative control) and the vacuity check must make spin find the
# violation it names.
. "$(dirname "$0")/lib.sh"

command -v spin >/dev/null || fail "spin is not installed (scripts/deps.sh installs it)"
command -v gcc >/dev/null || fail "gcc is not installed"
MODEL=$TN_SRC/tests/model/tenure.pml
DEPTH=10000

# verify NAME [spin -D flags...]: compile pan for the variant and run an
# exhaustive safety search; the output lands in $T/NAME.out.
verify() {
    local name=$1
    shift
    mkdir -p "$T/$name"
    cp "$MODEL" "$T/$name/tenure.pml"
    (cd "$T/$name" && spin "$@" -a tenure.pml >spin.log 2>&1) \
        || { cat "$T/$name/spin.log" >&2; fail "$name: spin -a failed"; }
    (cd "$T/$name" && gcc -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c) \
        || fail "$name: pan did not compile"
    (cd "$T/$name" && ./pan -m$DEPTH >"$T/$name.out" 2>&1) || true
}

errors_of() {
    sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$T/$1.out" | head -1
}

# The correct model: exhaustive, not truncated, no error at all.
verify correct
out=$T/correct.out
grep -q 'errors: 0' "$out" || { cat "$out" >&2; fail "spin found a violation in the correct model"; }
grep -q 'max search depth too small' "$out" && fail "search truncated: raise DEPTH"
grep -q 'assertion violations	+' "$out" || fail "assertions were not checked"
grep -q 'invalid end states	+' "$out" || fail "invalid end states were not checked"
states=$(sed -n 's/^ *\([0-9][0-9]*\) states, stored.*/\1/p' "$out")
[ -n "$states" ] && [ "$states" -gt 100000 ] || fail "suspiciously small state space: ${states:-none}"
pass "correct model: 0 errors, $states states stored (exhaustive)"

# expect_violation NAME ASSERTION-REGEX FLAG: spin must find that assertion.
expect_violation() {
    local name=$1 want=$2
    shift 2
    verify "$name" "$@"
    local e
    e=$(errors_of "$name")
    [ "${e:-0}" -ge 1 ] || { cat "$T/$name.out" >&2; fail "$name: spin found no violation"; }
    grep -Eq "assertion violated $want" "$T/$name.out" \
        || { cat "$T/$name.out" >&2; fail "$name: not the expected violation ($want)"; }
    pass "$name: spin finds $(grep -o 'assertion violated [^ ]*' "$T/$name.out" | head -1)"
}

expect_violation nofence '\(t>=max_admitted\)' -DBUG_NOFENCE
expect_violation noclaim '\(g>=read_g\)' -DBUG_NOCLAIM
expect_violation token-reset '\(g>=(read_g|claimed_g)\)' -DBUG_TOKEN_RESET
expect_violation reach-reject 'claim' -DREACH_REJECT
