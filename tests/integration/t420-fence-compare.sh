#!/usr/bin/env bash
# not under the sanitizers: the comparison's Python harness and the other
#   locks (tenure's fence runs under the sanitizers in t401-t404)
# A short `make compare` (docs/COMPARE.md): the incident replayed a few
# times against every lock whose server is installed (each one missing is
# named in the output), every pause long enough to stage it.  Fails if
# tenure with the fence (SQLite, PostgreSQL, Kafka through
# tenure-materializer) admits a stale write or loses an update, if no
# trial staged the incident, or if a negative control (the same trials'
# sinks that ignore the token) admits no stale write.  The report and the
# chart are made too.  COMPARE_PLANT=fence-off / fence-plain turn it red.
. "$(dirname "$0")/lib.sh"

export COMPARE_TRIALS=${COMPARE_TRIALS:-4}
export COMPARE_PAUSE=2.0:2.5
export COMPARE_BENCH_ROUNDS=1 COMPARE_BENCH_N=20 COMPARE_BENCH_WORKERS=2
export COMPARE_OUT=$T/compare COMPARE_REPORT=$T/report.md TN_BIN
PY=${TN_PYTHON3:-/usr/bin/python3}

"$TN_SRC/compare/run.sh" >"$T/run.log" 2>&1 || { cat "$T/run.log" >&2; fail "compare/run.sh failed"; }
grep -E '^compare: (systems|.*not run)' "$T/run.log" || true
PYTHONPATH=$TN_SRC/compare "$PY" "$TN_SRC/compare/reader.py" check "$COMPARE_OUT/results.json" ||
    fail "the comparison's verdict (above)"
grep -q '^## Which configurations are safe' "$T/report.md" || fail "no report"
grep -q '<svg' "$T/report.svg" || fail "no chart"
pass "tenure with the fence admitted no stale write in $COMPARE_TRIALS trials per sink; every sink that ignores the token admitted one"
