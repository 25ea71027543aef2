# SPDX-License-Identifier: MIT
# The strict JSON glue (files and answers) and the decoder of request
# bodies.
tn_add_unit_test(test_json
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_json.c
    LIBS tn_common_static)
tn_add_unit_test(test_decode
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_decode.c
    LIBS tn_api)
