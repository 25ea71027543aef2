# SPDX-License-Identifier: MIT
# The OpenAPI description against a live tenured: a property-based test
# (hypothesis + jsonschema, Debian packages), without and with --auth-file.
# Its random requests reach tenured's parsing and answers: it runs in the
# sanitizer build's stage too (label asan).  A run where nothing passed fails (tests/tools/openapi/conftest.py), and
# pytest's own "no tests collected" exits 5, which CTest counts as failed.
# COST: its seconds in a recorded run under the sanitizers, among the
# longest of that stage, so ctest starts it early on a fresh tree.
add_test(NAME py/openapi-property
    COMMAND ${TN_PYTHON3} -m pytest -q -p no:cacheprovider
            ${CMAKE_CURRENT_SOURCE_DIR}/openapi)
set_tests_properties(py/openapi-property PROPERTIES LABELS "integration;asan"
    ENVIRONMENT "TN_BIN=${CMAKE_BINARY_DIR}/bin;TN_SRC=${CMAKE_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1"
    TIMEOUT 300 COST 107)
