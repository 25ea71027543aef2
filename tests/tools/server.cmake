# SPDX-License-Identifier: MIT
# Test tools driving tenured over HTTP: tn-hammer (concurrent acquire load
# and the crash-test checks) and tn-slowclient (idle, slow-drip and raw
# socket clients).
add_executable(tn-hammer server/hammer.c server/hammer_run.c
    server/hammer_load.c server/hammer_check.c server/hammer_verify.c)
target_include_directories(tn-hammer PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/server)
target_link_libraries(tn-hammer PRIVATE tn_common PkgConfig::CURL
    PkgConfig::JANSSON)

add_executable(tn-slowclient server/slowclient.c)
target_link_libraries(tn-slowclient PRIVATE tn_common)
