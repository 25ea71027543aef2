# SPDX-License-Identifier: MIT
# The HTTP front end's connection state machine, over socketpairs.
tn_add_unit_test(test_http
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_http.c
    LIBS tn_http tn_common_static)
