# SPDX-License-Identifier: MIT
# The JSON reply writer of the API.
tn_add_unit_test(test_reply
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_reply.c
        ${PROJECT_SOURCE_DIR}/src/api/reply.c
    LIBS tn_common_static)
