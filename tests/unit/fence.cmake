# SPDX-License-Identifier: MIT
# The fence kit: SQLite, in-memory, proofs, record checks (test_fence), the
# rule through tn_fence_ops (test_fence_ops), the batch fence and proof
# cache (test_fence_batch), Kafka stamping (test_fence_kafka); and its
# PostgreSQL contract (needs TENURE_TEST_PG_URL; exits 77 only when unset).
tn_add_unit_test(test_fence SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fence.c
    LIBS tenure_static)
tn_add_unit_test(test_fence_pg
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fence_pg.c LIBS tenure_pg_static)
set_tests_properties(unit/test_fence_pg PROPERTIES SKIP_RETURN_CODE 77)
tn_add_unit_test(test_fence_kafka
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fence_kafka.c
    LIBS tenure_kafka_static)
tn_add_unit_test(test_sink
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_sink.c LIBS tn_sinks)
tn_add_unit_test(test_fence_ops
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fence_ops.c LIBS tenure_static)
tn_add_unit_test(test_fence_batch
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_fence_batch.c LIBS tenure_static)
