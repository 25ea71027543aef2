# SPDX-License-Identifier: MIT
# The option parser of every binary (src/common/opt.c, opt_help.c).
tn_add_unit_test(test_opt
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_opt.c
    LIBS tn_opt)
