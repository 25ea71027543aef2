# SPDX-License-Identifier: MIT
# The embedded store's journal and the disk layer over it, on real files.
tn_add_unit_test(test_journal
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_journal.c
    LIBS tn_store)
# The disk layer over the journal under kill -9 and compaction.
tn_add_unit_test(test_disk_crash
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_disk_crash.c
    LIBS tn_store)
# The group committer on a real loop and thread, with a recording writer.
tn_add_unit_test(test_commit
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_commit.c
    LIBS tn_store tn_common_static)
# The disk layer (journal + tenure.db + compaction) on real files.
tn_add_unit_test(test_disk
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_disk.c
    LIBS tn_store tn_common_static)
# The one waiter queue of every backend (blocking acquire) on a real loop.
tn_add_unit_test(test_waitq
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_waitq.c
    LIBS tn_store tn_common_static)
# The PostgreSQL store's connection module: host lists, and the order of a
# round against local ports that refuse or never answer (no PostgreSQL).
tn_add_unit_test(test_pg_link
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_pg_link.c
    LIBS tn_store tn_common_static)
# The PostgreSQL store's token floor on real files.
tn_add_unit_test(test_pg_floor
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_pg_floor.c
    LIBS tn_store tn_common_static)
