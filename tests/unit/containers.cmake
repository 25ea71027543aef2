# SPDX-License-Identifier: MIT
# The one map, the one heap, the event loop whose timers sit on it, and
# the one metrics writer.
tn_add_unit_test(test_map
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_map.c LIBS tn_common_static)
tn_add_unit_test(test_heap
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_heap.c LIBS tn_common_static)
tn_add_unit_test(test_loop
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_loop.c LIBS tn_common_static)
tn_add_unit_test(test_metrics
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_metrics.c LIBS tn_common_static)
