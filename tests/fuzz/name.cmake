# SPDX-License-Identifier: MIT
# Lease names in paths: percent-decoding and name validation.
tn_add_fuzz_target(name
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_name.c
    LIBS tn_http tn_common_static tenure_static)
