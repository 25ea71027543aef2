# SPDX-License-Identifier: MIT
# The history parser and checker of tenure-check.
tn_add_fuzz_target(history
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_history.c
    LIBS tn_check)
