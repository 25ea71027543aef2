# SPDX-License-Identifier: MIT
# Kafka test helpers: the mock cluster, a raw/forged record producer and
# the incident's worker.
add_executable(tn-kafka-mock ${CMAKE_CURRENT_LIST_DIR}/kafka/mock.c)
target_link_libraries(tn-kafka-mock PRIVATE PkgConfig::RDKAFKA)
add_executable(tn-produce ${CMAKE_CURRENT_LIST_DIR}/kafka/produce.c)
target_link_libraries(tn-produce PRIVATE tenure_static PkgConfig::RDKAFKA)
add_executable(tn-worker ${CMAKE_CURRENT_LIST_DIR}/kafka/worker.c)
target_link_libraries(tn-worker PRIVATE tenure_kafka_static PkgConfig::CURL
    PkgConfig::JANSSON)
add_executable(tn-txn-write ${CMAKE_CURRENT_LIST_DIR}/kafka/txn_write.c)
target_link_libraries(tn-txn-write PRIVATE tenure_kafka_static)
