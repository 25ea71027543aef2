# SPDX-License-Identifier: MIT
# The one parser of addresses and URLs (common/url.c) and the Redis and
# Kafka stream URLs on it.
tn_add_fuzz_target(url
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_url.c
    LIBS tn_common_static)
