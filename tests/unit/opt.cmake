# SPDX-License-Identifier: MIT
# The option parser of every binary (src/common/opt*.c): the values of
# each type (test_opt), the argv walk, environment and --help
# (test_opt_parse); their table is opt_fixture.h.
tn_add_unit_test(test_opt
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_opt.c
    LIBS tn_opt)
tn_add_unit_test(test_opt_parse
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_opt_parse.c
    LIBS tn_opt)
