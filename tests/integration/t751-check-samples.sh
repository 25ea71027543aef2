#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tenure-check on the sample histories of tests/check/: clean-*.jsonl exit 0
# with "valid": true; viol-<class>.jsonl (one per class) and
# viol-<class>--<case>.jsonl (more cases of a class, such as the session
# rules') exit 1 and report exactly that class with a witness;
# malformed-*.jsonl exit 2 with nothing on stdout and the line on stderr.
# Files and stdin alike; --help exits 0.
. "$(dirname "$0")/lib.sh"

CHECK=$TN_BIN/tenure-check
JGET=$TN_BIN/tn-json-get
[ -x "$CHECK" ] || fail "no $CHECK"
[ -x "$JGET" ] || fail "no $JGET"
DIR=$TN_SRC/tests/check
CLASSES="duplicate_token token_order overlapping_grant superseded_success
renew_token_changed sink_below_mark sink_never_granted sink_mark_moved_down
sink_mark_mismatch renew_after_lost check_revived"

# run FILE: sets RC, OUT (stdout file), ERR (stderr file).
run() {
    OUT=$T/out.json ERR=$T/err.txt
    set +e
    "$CHECK" "$1" >"$OUT" 2>"$ERR"
    RC=$?
    set -e
}

n=0
for f in "$DIR"/clean-*.jsonl; do
    run "$f"
    [ "$RC" = 0 ] || { cat "$OUT" "$ERR" >&2; fail "$(basename "$f"): exit $RC, want 0"; }
    [ "$("$JGET" valid <"$OUT")" = true ] || fail "$(basename "$f"): not valid"
    for c in $CLASSES; do
        [ "$("$JGET" "counts.$c" <"$OUT")" = 0 ] || fail "$(basename "$f"): $c counted"
    done
    # stdin gives the same verdict
    set +e
    "$CHECK" <"$f" >"$T/stdin.json"
    rc=$?
    set -e
    [ "$rc" = 0 ] || fail "$(basename "$f") on stdin: exit $rc"
    cmp -s "$OUT" "$T/stdin.json" || fail "$(basename "$f"): stdin report differs"
    n=$((n + 1))
done
[ "$n" -ge 2 ] || fail "no clean samples"
pass "$n clean histories exit 0"

for c in $CLASSES; do
    [ -f "$DIR/viol-$c.jsonl" ] || fail "no sample for class $c"
done
n=0
for f in "$DIR"/viol-*.jsonl; do
    v=$(basename "$f" .jsonl)
    c=${v#viol-}
    c=${c%%--*} # viol-<class>--<what>.jsonl: another case of that class
    grep -qw "$c" <<<"$CLASSES" || fail "$v: no class $c"
    run "$f"
    [ "$RC" = 1 ] || { cat "$OUT" "$ERR" >&2; fail "$v: exit $RC, want 1"; }
    [ "$("$JGET" valid <"$OUT")" = false ] || fail "$v: valid"
    for other in $CLASSES; do
        got=$("$JGET" "counts.$other" <"$OUT")
        if [ "$other" = "$c" ]; then
            [ "$got" -ge 1 ] || fail "$v: $c not counted"
        else
            [ "$got" = 0 ] || fail "$v: unexpected $other ($got)"
        fi
    done
    [ "$("$JGET" violations.0.class <"$OUT")" = "$c" ] || fail "$v: wrong class first"
    "$JGET" violations.0.events.0.line <"$OUT" >/dev/null || fail "$v: no witness"
    [ -n "$("$JGET" violations.0.why <"$OUT")" ] || fail "$v: no why"
    n=$((n + 1))
done
pass "every violation class is reported with a witness, exit 1 ($n samples)"

n=0
for f in "$DIR"/malformed-*.jsonl; do
    run "$f"
    [ "$RC" = 2 ] || fail "$(basename "$f"): exit $RC, want 2"
    [ ! -s "$OUT" ] || fail "$(basename "$f"): printed a report"
    grep -q 'line [0-9]' "$ERR" || fail "$(basename "$f"): no line number in: $(cat "$ERR")"
    n=$((n + 1))
done
[ "$n" -ge 1 ] || fail "no malformed samples"
pass "$n malformed histories exit 2"

run /nonexistent/history.jsonl
[ "$RC" = 2 ] || fail "missing file: exit $RC, want 2"
"$CHECK" --help | grep -q 'usage: tenure-check' || fail "--help"
pass "missing file exits 2, --help exits 0"
