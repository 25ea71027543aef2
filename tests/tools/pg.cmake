# SPDX-License-Identifier: MIT
# PostgreSQL store test tools: tn-pg-history (multi-instance history
# recorder for tenure-check) and tn-pg-sql (prints the store's SQL, so the
# pgbench comparison runs the very statement tenured prepares).
add_executable(tn-pg-history pg/history.c)
target_link_libraries(tn-pg-history PRIVATE tn_common PkgConfig::CURL
    PkgConfig::JANSSON Threads::Threads)

add_executable(tn-pg-sql pg/pg_sql_dump.c ${CMAKE_SOURCE_DIR}/src/store/pg/sql.c)
