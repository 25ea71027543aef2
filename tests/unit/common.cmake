# SPDX-License-Identifier: MIT
# Leaf utilities of src/common/.
tn_add_unit_test(test_buf
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_buf.c
    LIBS tn_common_static)
tn_add_unit_test(test_url
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_url.c
    LIBS tn_common_static)
tn_add_unit_test(test_name
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_name.c
    LIBS tn_common_static)
