#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# java/run-tests.sh [unit|conformance]: the Java client's tests, offline,
# with the jars CMake built (TN_JAVA_CP) and Debian's JUnit 5 console
# launcher, against real tenured processes from $TN_BIN (and the PostgreSQL
# of scripts/with-pg.sh, TENURE_TEST_PG_URL, for the fence).
#   unit         every JUnit test of java/src/test (client, fence, frozen JVM)
#   conformance  the shared scenarios of tests/conformance through the client
# Fails when no test ran.
set -euo pipefail
: "${TN_SRC:?}" "${TN_BIN:?}" "${TN_JAVA_CP:?set by ctest (java/CMakeLists.txt)}"
java=${TN_JAVA:-java}
case ${1:-unit} in
unit)
    log=$(mktemp /tmp/tenure-java.XXXXXX)
    trap 'rm -f "$log"' EXIT
    rc=0
    (cd "$TN_SRC/java" && "$java" -cp "$TN_JAVA_CP" org.junit.platform.console.ConsoleLauncher \
        --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests \
        --scan-classpath "${TN_JAVA_TESTS_JAR:?}") >"$log" 2>&1 || rc=$?
    cat "$log"
    ok=$(sed -n 's/.*\[ *\([0-9]*\) tests successful.*/\1/p' "$log")
    bad=$(sed -n 's/.*\[ *\([0-9]*\) tests failed.*/\1/p' "$log")
    echo "java: ${ok:-0} passed, ${bad:-?} failed"
    [ "$rc" = 0 ] && [ "${ok:-0}" -gt 0 ] || exit 1
    ;;
conformance)
    . "$TN_SRC/tests/integration/lib.sh"
    . "$TN_SRC/tests/integration/lib-server.sh"
    dir=$TN_SRC/tests/conformance
    for s in acquire held renew lost release check wait events session_basic session_claim session_keepalive; do
        [ -f "$dir/$s.json" ] || fail "scenario $s.json is missing"
    done
    tn_start_server
    "$java" -cp "$TN_JAVA_CP" tenure.test.Conformance "$URL" "$dir"/*.json ||
        fail "the Java client does not conform"
    pass "$(ls "$dir"/*.json | wc -l) scenarios through the Java client"
    ;;
*)
    echo "usage: java/run-tests.sh [unit|conformance]" >&2
    exit 2
    ;;
esac
