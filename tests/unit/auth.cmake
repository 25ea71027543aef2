# SPDX-License-Identifier: MIT
# The auth module of CONTRACT §9 (src/api/auth.c, auth_check.c), compiled
# in directly so that the test does not depend on how the server links it:
# the auth file (test_auth) and what it allows (test_auth_access).
foreach(t test_auth test_auth_access)
    tn_add_unit_test(${t} SOURCES ${t}.c ${CMAKE_SOURCE_DIR}/src/api/auth.c
        ${CMAKE_SOURCE_DIR}/src/api/auth_check.c
        LIBS tn_common_static PkgConfig::SODIUM PkgConfig::JANSSON)
endforeach()
