# SPDX-License-Identifier: MIT
# The demo fence's contract (src/fence/demo.c).
tn_add_unit_test(test_fence_demo
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fence_demo.c LIBS tenure_static)
