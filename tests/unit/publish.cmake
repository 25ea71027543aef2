# SPDX-License-Identifier: MIT
# The publisher's event log (src/publish/log.c) and record JSON.
tn_add_unit_test(test_publish_log
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_publish_log.c
    LIBS tn_publish)
