#!/usr/bin/env bash
# not under the sanitizers: the planted build is not sanitized (its clean
#   half, the same profile on the build under test, runs under them as t76x)
# Negative control for the PostgreSQL acquire: built with the token drawn
# before the row lock (tests/plants/token-before-lock.patch, the
# INSERT ... VALUES (nextval()) ... ON CONFLICT DO UPDATE SET fencing_token =
# excluded.fencing_token mistake), the store contract's slow-acquirer case
# must fail: a grant installs a token below the row's.  The same case passes
# on the build under test.  Only that case runs (TN_TEST_FILTER): the whole
# suite on the build under test is contract/pg.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-pg.sh"
. "$(dirname "$0")/lib-negative.sh"
pg_need
pg_fresh_schema t775
pb=$(neg_plant TOKEN_BEFORE_LOCK tn-store-contract)

export TN_TEST_FILTER=pg_slow_acquirer
if TENURE_TEST_PG_URL=$PG_URL "$pb/tn-store-contract" pg >"$T/plant.out" 2>&1; then
    fail "the planted store passed the contract: $(grep -E 'FAIL|slow' "$T/plant.out")"
fi
grep -q "^FAIL pg/pg_slow_acquirer" "$T/plant.out" ||
    fail "the plant failed, but not in pg_slow_acquirer: $(grep FAIL "$T/plant.out")"
pass "TOKEN_BEFORE_LOCK caught: $(grep '^FAIL' "$T/plant.out" | tr '\n' ' ')"

pg_fresh_schema t775b
TENURE_TEST_PG_URL=$PG_URL "$TN_BIN/tn-store-contract" pg >"$T/clean.out" 2>&1 ||
    fail "the build under test fails the contract: $(grep -E 'FAIL|check failed|: rc ' "$T/clean.out")"
grep -q "^ok   pg/pg_slow_acquirer" "$T/clean.out" ||
    fail "pg_slow_acquirer did not run: $(cat "$T/clean.out")"
pass "the build under test passes pg_slow_acquirer"
