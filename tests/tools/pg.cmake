# SPDX-License-Identifier: MIT
# PostgreSQL store test tools: tn-pg-history (multi-instance history
# recorder for tenure-check) and tn-pg-sql (prints the store's SQL, so the
# pgbench comparison runs the very statement tenured prepares).
add_executable(tn-pg-history pg/history.c)
target_link_libraries(tn-pg-history PRIVATE tn_common PkgConfig::CURL
    PkgConfig::JANSSON Threads::Threads)

set(tn_pg_sql_dir ${CMAKE_SOURCE_DIR}/src/store/pg)
add_executable(tn-pg-sql pg/pg_sql_dump.c ${tn_pg_sql_dir}/sql.c
    ${tn_pg_sql_dir}/sql_acquire.c ${tn_pg_sql_dir}/sql_schema.c
    ${tn_pg_sql_dir}/sql_session.c)
