# SPDX-License-Identifier: MIT
# tenure-check: the rules on hand-made histories (renews that shorten a
# lease in test_check_renew, sessions in test_check_session), the parser
# on malformed input, and the command line's exit codes.
tn_add_unit_test(test_check
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_check.c
    LIBS tn_check)
tn_add_unit_test(test_check_renew
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_check_renew.c
    LIBS tn_check)
tn_add_unit_test(test_check_random
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_check_random.c
    LIBS tn_check)
tn_add_unit_test(test_check_history
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_check_history.c
    LIBS tn_check)
tn_add_unit_test(test_check_session
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_check_session.c
    LIBS tn_check)
tn_add_unit_test(test_check_session_random
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_check_session_random.c
    LIBS tn_check)
