# SPDX-License-Identifier: MIT
# Request routing: method, path and query to route, name and parameters,
# over the API's route table.
tn_add_fuzz_target(route
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_route.c
    LIBS tn_api tn_fence)
