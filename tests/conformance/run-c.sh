#!/usr/bin/env bash
# The shared client scenarios through libtenure's client (tn-conformance),
# against a tenured started here.  tests/integration/python/test_conformance.py runs the
# same files through the Python client.
. "$TN_SRC/tests/integration/lib.sh"
. "$TN_SRC/tests/integration/lib-server.sh"
[ -x "$TN_BIN/tn-conformance" ] || fail "missing $TN_BIN/tn-conformance (build it first)"
dir="$TN_SRC/tests/conformance"
mapfile -t files < <(ls "$dir"/*.json)
# Never pass on an empty or shrunken set: these are the scenarios the issue
# asks both clients to agree on.
for s in acquire held renew lost release check wait events; do
    [ -f "$dir/$s.json" ] || fail "scenario $s.json is missing"
done
for s in session_basic session_claim session_keepalive; do
    [ -f "$dir/$s.json" ] || fail "scenario $s.json is missing"
done
tn_start_server
"$TN_BIN/tn-conformance" "$URL" "${files[@]}" | tee "$T/conf.out" ||
    fail "the C client does not conform"
# Scenarios that need sessions skip (each says so) while the server
# answers 501 for them; the count is in the last line.
pass "${#files[@]} scenarios through libtenure ($(tail -1 "$T/conf.out"))"
