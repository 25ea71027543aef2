# SPDX-License-Identifier: MIT
# The HTTP front end's connection state machine (test_http), its budgets
# (test_http_budget) and half-closed connections (test_http_close), over
# socketpairs.
tn_add_unit_test(test_http
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_http.c
    LIBS tn_http tn_common_static)
tn_add_unit_test(test_http_budget
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_http_budget.c
    LIBS tn_http tn_common_static)
tn_add_unit_test(test_http_close
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_http_close.c
    LIBS tn_http tn_common_static)
tn_add_unit_test(test_http_site
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_http_site.c
    LIBS tn_http tn_common_static)
