# SPDX-License-Identifier: MIT
# The strict JSON glue and the flat-body decoder.
tn_add_unit_test(test_json
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_json.c
    LIBS tn_common_static)
# The arena jansson allocates request bodies from.
tn_add_unit_test(test_json_arena
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_json_arena.c
    LIBS tn_common_static)
