# shellcheck shell=bash disable=SC2034
# The option recipe (docs/CONTRIBUTING.md "An option"): sourced by run.sh
# (see store/check.sh).
recipe_targets="tenured test_config"
recipe_check() {
    "$RB/test_config" >"$T/config.log" 2>&1 ||
        fail "option: test_config: $(grep -E 'no case|FAILED|Failure' "$T/config.log" | head -3)"
    grep -q -- '--instance-name' <<<"$("$RB/tenured" --help)" ||
        fail "option: --instance-name is not in tenured --help"
    grep -q 'instance-name' <<<"$("$RB/tenured" --config-markdown)" ||
        fail "option: --instance-name is not in --config-markdown"
    local long
    long=$(printf 'x%.0s' $(seq 1 64))
    "$RB/tenured" --instance-name "$long" --data-dir "$T/long" >"$T/long.log" 2>&1 &&
        fail "option: a 64-byte --instance-name was accepted"
    grep -q 'too long' "$T/long.log" || fail "option: $(cat "$T/long.log")"
    TENURE_INSTANCE_NAME=east-1 tn_start_server
    grep -q '"instance" name="east-1"' "$T/tenured.log" ||
        fail "option: TENURE_INSTANCE_NAME=east-1 is not in the start-up log"
    kill "$SERVER_PID" && wait "$SERVER_PID" 2>/dev/null || true
    pass "option: test_config covers it; --instance-name in --help and --config-markdown, read from TENURE_INSTANCE_NAME, logged at start-up, too long refused"
}
