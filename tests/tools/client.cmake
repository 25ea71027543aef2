# SPDX-License-Identifier: MIT
# Client test helpers: tn-client-probe drives the keepalive for the t3xx
# integration tests.
if(TARGET tn_client)
    add_executable(tn-client-probe ${CMAKE_CURRENT_SOURCE_DIR}/client/probe.c
        ${CMAKE_CURRENT_SOURCE_DIR}/client/probe_s.c)
    target_link_libraries(tn-client-probe PRIVATE tenure_kafka_static)
endif()

# The worker of docs/CLIENT.md, compiled with the project's warnings and
# run by t307 (which also checks the doc and this file agree).
if(TARGET tn_client)
    add_executable(tn-worker-example
        ${CMAKE_CURRENT_SOURCE_DIR}/client/worker_example.c)
    target_link_libraries(tn-worker-example PRIVATE tenure_static)
endif()

# tn-ev-loss: how fast the keepalive reports a loss, with and without the
# event stream (t310).
if(TARGET tn_client)
    add_executable(tn-ev-loss ${CMAKE_CURRENT_SOURCE_DIR}/client/ev_loss.c)
    target_link_libraries(tn-ev-loss PRIVATE tenure_kafka_static)
endif()

# tn-keep-many: how many leases (or leases of one session) one client keeps
# alive (bench/keepalive.sh).
if(TARGET tn_client)
    add_executable(tn-keep-many ${CMAKE_CURRENT_SOURCE_DIR}/client/keep_many.c)
    target_link_libraries(tn-keep-many PRIVATE tenure_static)
endif()

# tn-share-worker: one worker of the fair-share recipe, writing through the
# fence into a SQLite sink (t322).
if(TARGET tn_client)
    add_executable(tn-share-worker
        ${CMAKE_CURRENT_SOURCE_DIR}/client/share_worker.c)
    target_link_libraries(tn-share-worker PRIVATE tenure_static
        PkgConfig::SQLITE)
endif()
