/* SPDX-License-Identifier: MIT */
/* tn-pg-sql: print the PostgreSQL store's SQL, so that benchmarks and
 * manual checks run exactly the statements tenured prepares.
 *   tn-pg-sql schema           the migrations, in order, then the outbox
 *                              as a table (tenured's sessions use a
 *                              temporary one)
 *   tn-pg-sql stmt NAME        one statement (acquire, renew, ...) as is
 *   tn-pg-sql pgbench NAME     the same with $N written as a typed :pN */
#include <stdio.h>
#include <string.h>

#include "store/pg/sql.h"

static const char *const names[TN_PG_N_STMTS] = {
    [TN_PG_ACQUIRE] = "acquire",
    [TN_PG_ACQUIRE_SESSION] = "acquire_session",
    [TN_PG_RENEW] = "renew",
    [TN_PG_RELEASE] = "release",
    [TN_PG_GET] = "get",
    [TN_PG_CHECK] = "check",
    [TN_PG_LIST] = "list",
    [TN_PG_HISTORY] = "history",
    [TN_PG_SWEEP] = "sweep",
    [TN_PG_PRUNE] = "prune",
    [TN_PG_COUNT] = "count",
    [TN_PG_SYNC] = "sync",
    [TN_PG_NOTIFY] = "notify",
    [TN_PG_SESSION_OPEN] = "session_open",
    [TN_PG_SESSION_RENEW] = "session_renew",
    [TN_PG_SESSION_END] = "session_end",
    [TN_PG_SESSION_GET] = "session_get",
    [TN_PG_SESSION_LIST] = "session_list",
    [TN_PG_CLAIM] = "claim",
    [TN_PG_UNCLAIM] = "unclaim",
    [TN_PG_SESSION_SWEEP] = "session_sweep"};

/* Parameters the benchmark scripts set (p1..p6); the later ones are sent
 * as NULL (acquire's principal: auth off), or as 0 when numeric (acquire's
 * limits: none reached). */
#define BENCH_PARAMS 6

static int find(const char *name)
{
    for (int i = 0; i < TN_PG_N_STMTS; i++) {
        if (names[i] != NULL && strcmp(names[i], name) == 0)
            return i;
    }
    return -1;
}

static const char *type_name(unsigned int oid)
{
    switch (oid) {
    case 16:
        return "boolean";
    case 17:
        return "bytea";
    case 20:
        return "bigint";
    case 1000:
        return "boolean[]";
    case 1001:
        return "bytea[]";
    case 1009:
        return "text[]";
    case 1016:
        return "bigint[]";
    default:
        return "text";
    }
}

/* $N becomes CAST(:pN AS <declared type>): pgbench -M prepared then sends
 * the same statement with the same parameter types tenured prepares. */
static void print_pgbench(const struct tn_pg_stmt_def *d)
{
    for (const char *p = d->sql; *p != '\0'; p++) {
        if (*p == '$' && p[1] >= '1' && p[1] <= '9') {
            int i = p[1] - '0';
            while (p[2] >= '0' && p[2] <= '9') {
                i = 10 * i + (p[2] - '0');
                p++;
            }
            i--; /* $1 is types[0] */
            if (i < BENCH_PARAMS)
                printf("CAST(:p%d AS %s)", i + 1, type_name(d->types[i]));
            else if (d->types[i] == 20) /* int8 */
                printf("CAST(0 AS %s)", type_name(d->types[i]));
            else
                printf("CAST(NULL AS %s)", type_name(d->types[i]));
            p++;
        } else {
            putchar(*p);
        }
    }
    printf(";\n");
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "schema") == 0) {
        for (size_t i = 0; i < tn_pg_n_migrations; i++)
            printf("%s;\n", tn_pg_migrations[i].sql);
        printf("%s;\n", tn_pg_sql_outbox_table);
        return 0;
    }
    int i = argc == 3 ? find(argv[2]) : -1;
    if (i < 0 ||
        (strcmp(argv[1], "stmt") != 0 && strcmp(argv[1], "pgbench") != 0)) {
        fprintf(stderr, "usage: tn-pg-sql schema | stmt NAME | pgbench NAME\n");
        return 2;
    }
    if (strcmp(argv[1], "stmt") == 0)
        printf("%s;\n", tn_pg_stmts[i].sql);
    else
        print_pgbench(&tn_pg_stmts[i]);
    return 0;
}
