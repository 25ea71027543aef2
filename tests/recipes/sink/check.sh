# shellcheck shell=bash disable=SC2034
# The materializer sink recipe (docs/CONTRIBUTING.md "A materializer
# sink"): sourced by run.sh (see store/check.sh).
recipe_targets="tenure-materializer"
recipe_check() {
    local out
    out=$("$RB/tenure-materializer" --brokers 127.0.0.1:1 --topic t \
        --sink nosuch: --exit-at-end 2>&1) && fail "sink: an unknown --sink was accepted"
    grep -q 'demo:PATH' <<<"$out" || fail "sink: the unknown sink's error does not list demo:PATH: $out"

    # The same records through the demo sink and the SQLite sink: the same
    # decisions, record by record.
    TN_BIN=$MAIN_BIN fence_start_mock raw:3
    "$MAIN_BIN/tn-produce" --brokers "$BROKERS" --topic raw --gen 7 --count 200 \
        >/dev/null || fail "sink: produce"
    "$RB/tenure-materializer" --brokers "$BROKERS" --topic raw \
        --sink "demo:$T/decisions.txt" --batch 7 --exit-at-end 2>"$T/demo.log" ||
        fail "sink: the materializer on the demo sink: $(tail -3 "$T/demo.log")"
    "$RB/tenure-materializer" --brokers "$BROKERS" --topic raw \
        --sink "sqlite:$T/ref.db" --batch 7 --exit-at-end 2>"$T/ref.log" ||
        fail "sink: the materializer on the SQLite sink: $(tail -3 "$T/ref.log")"
    sqlite3 "$T/ref.db" "SELECT 'admitted', topic, \"partition\", \"offset\",
            coalesce(resource, '-'), coalesce(token, '-') FROM tenure_admitted
        UNION ALL SELECT 'rejected', topic, \"partition\", \"offset\",
            coalesce(resource, '-'), coalesce(token, '-') || ' ' || reason
            FROM tenure_rejected" | tr '|' ' ' | sort >"$T/ref.txt"
    sort "$T/decisions.txt" >"$T/demo.txt"
    [ "$(wc -l <"$T/demo.txt")" = 200 ] || fail "sink: $(wc -l <"$T/demo.txt") decisions for 200 records"
    grep -q '^rejected ' "$T/demo.txt" || fail "sink: the demo sink rejected nothing"
    diff "$T/ref.txt" "$T/demo.txt" >"$T/sink.diff" ||
        fail "sink: the demo sink decided otherwise than the SQLite sink: $(head -5 "$T/sink.diff")"
    pass "sink: --sink demo:PATH decides 200 records as the SQLite sink does ($(grep -c '^rejected ' "$T/demo.txt") rejected); an unknown --sink lists demo:PATH"
}
