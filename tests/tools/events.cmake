# SPDX-License-Identifier: MIT
# tn-sse-stall: an event-stream consumer that never reads.
add_executable(tn-sse-stall ${CMAKE_CURRENT_SOURCE_DIR}/events/sse_stall.c)
