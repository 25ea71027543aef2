# SPDX-License-Identifier: MIT
# Request routing of the v1 API over its route table: method, path and
# query to route.
tn_add_unit_test(test_route
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_route.c
    LIBS tn_api tn_fence PkgConfig::JANSSON)
