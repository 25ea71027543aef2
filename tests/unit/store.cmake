# SPDX-License-Identifier: MIT
# The embedded store's journal and the disk layer over it, on real files.
tn_add_unit_test(test_journal
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_journal.c
    LIBS tn_store)
