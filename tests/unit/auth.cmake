# SPDX-License-Identifier: MIT
# The auth module of CONTRACT §9 (src/api/auth.c, auth_check.c), compiled
# in directly so that the test does not depend on how the server links it.
tn_add_unit_test(test_auth SOURCES test_auth.c ${CMAKE_SOURCE_DIR}/src/api/auth.c
    ${CMAKE_SOURCE_DIR}/src/api/auth_check.c
    LIBS tn_common_static PkgConfig::SODIUM PkgConfig::JANSSON)
