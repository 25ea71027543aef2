#!/usr/bin/env bash
# Every cmocka program runs its cases through TN_RUN_TESTS
# (tests/unit/tn_test.h), so that TN_TEST_FILTER can run one case alone
# (docs/CONTRIBUTING.md, "Running tests").  Fail on one that calls
# cmocka_run_group_tests itself.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for f in $(grep -rl --include='*.c' '<cmocka.h>' tests || true); do
    if grep -q 'cmocka_run_group_tests' "$f" || ! grep -q 'TN_RUN_TESTS' "$f"; then
        echo "check-unit-tests: $f must end with return TN_RUN_TESTS(tests, setup, teardown);" >&2
        status=1
    fi
done
exit $status
