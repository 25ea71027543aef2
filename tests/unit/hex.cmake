# SPDX-License-Identifier: MIT
# Hex and constant-time comparison of src/common (libsodium underneath).
tn_add_unit_test(test_hex SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_hex.c
    LIBS tn_common_static)
