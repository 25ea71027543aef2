# SPDX-License-Identifier: MIT
# The whole HTTP front end: bytes in, answers out, over a socketpair.
tn_add_fuzz_target(http
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_http.c
    LIBS tn_http tn_common_static)
