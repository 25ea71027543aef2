# SPDX-License-Identifier: MIT
# What the fence reads from Kafka records: tokens, headers, proofs.
tn_add_fuzz_target(fence
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_fence.c
    LIBS tenure_static)
