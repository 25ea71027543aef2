# SPDX-License-Identifier: MIT
# The one map, the one heap and the event loop whose timers sit on it.
tn_add_unit_test(test_map
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_map.c LIBS tn_common_static)
tn_add_unit_test(test_heap
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_heap.c LIBS tn_common_static)
tn_add_unit_test(test_loop
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_loop.c LIBS tn_common_static)
