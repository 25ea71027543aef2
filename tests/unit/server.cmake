# SPDX-License-Identifier: MIT
# tenured's option table, compiled into the test on its own.
tn_add_unit_test(test_config
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_config.c
            ${CMAKE_SOURCE_DIR}/src/server/config.c
    LIBS tn_opt)
target_compile_definitions(test_config PRIVATE TN_VERSION="${PROJECT_VERSION}")
