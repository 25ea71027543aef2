# SPDX-License-Identifier: MIT
# Request bodies: the decoder against strict jansson as the reference.
tn_add_fuzz_target(body
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_body.c
    LIBS tn_api PkgConfig::JANSSON)
