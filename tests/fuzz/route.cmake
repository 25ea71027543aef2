# SPDX-License-Identifier: MIT
# Request routing: method, path and query to route, name and parameters.
tn_add_fuzz_target(route
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_route.c
        ${PROJECT_SOURCE_DIR}/src/api/route.c
    LIBS tn_http tn_common_static)
