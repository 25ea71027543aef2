# SPDX-License-Identifier: MIT
# Request bodies: strict JSON parsing and the typed field getters.
tn_add_fuzz_target(json
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_json.c
    LIBS tn_common_static)
