# SPDX-License-Identifier: MIT
# Request routing of the v1 API: method, path and query to route.
tn_add_unit_test(test_route
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_route.c
        ${PROJECT_SOURCE_DIR}/src/api/route.c
    LIBS tn_http tn_common_static)
