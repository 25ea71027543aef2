/* SPDX-License-Identifier: MIT */
/* Fence kit contract on a real PostgreSQL (TENURE_TEST_PG_URL): the
 * migration (twice, and concurrently), the SQL function, the C helper, the
 * transaction rules, and two connections racing on one mark.  Skips (77)
 * only when the variable is unset; an unreachable database fails. */
#include <libpq-fe.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tenure/fence_pg.h>

#include "tn_test.h"

#include <cmocka.h>

static const char *pg_url;
static char resource[64]; /* unique per run, so reruns do not collide */

static PGconn *connect_pg(void)
{
    PGconn *c = PQconnectdb(pg_url);
    if (PQstatus(c) != CONNECTION_OK)
        fail_msg("cannot connect to TENURE_TEST_PG_URL: %s", PQerrorMessage(c));
    PGresult *r = PQexec(c, "SET client_min_messages = warning");
    PQclear(r);
    return c;
}

static void exec_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK &&
        PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQerrorMessage(c));
    PQclear(r);
}

static void test_fence_pg__migrate_is_idempotent_and_concurrent(void **state)
{
    (void)state;
    pid_t kids[3];
    for (int i = 0; i < 3; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            PGconn *c = PQconnectdb(pg_url);
            int rc = tn_fence_pg_migrate(c, NULL);
            PQfinish(c);
            _exit(rc == 0 ? 0 : 1);
        }
    }
    for (int i = 0; i < 3; i++) {
        int st = 0;
        assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    PGconn *c = connect_pg();
    assert_int_equal(tn_fence_pg_migrate(c, NULL), 0);
    PQfinish(c);
}

static void test_fence_pg__rule_via_c_helper(void **state)
{
    (void)state;
    PGconn *c = connect_pg();
    assert_int_equal(tn_fence_pg_migrate(c, NULL), 0);
    size_t len = strlen(resource);
    struct tn_errmsg em = {{0}};
    /* Outside a transaction the check would not fence anything. */
    assert_int_equal(tn_fence_pg_advance(c, resource, len, 1, NULL, &em),
                     TN_EINVAL);
    exec_ok(c, "BEGIN");
    uint64_t before = 9;
    assert_int_equal(tn_fence_pg_advance(c, resource, len, 402, &before, &em),
                     0);
    assert_int_equal(before, 0);
    assert_int_equal(tn_fence_pg_advance(c, resource, len, 402, &before, &em),
                     0);
    assert_int_equal(before, 402);
    assert_int_equal(tn_fence_pg_advance(c, resource, len, 403, NULL, &em), 0);
    assert_int_equal(tn_fence_pg_advance(c, resource, len, 402, &before, &em),
                     TN_ESTALE);
    assert_int_equal(before, 403);
    exec_ok(c, "COMMIT");
    /* A rolled-back advance leaves the mark where it was. */
    exec_ok(c, "BEGIN");
    assert_int_equal(tn_fence_pg_advance(c, resource, len, 900, NULL, &em), 0);
    exec_ok(c, "ROLLBACK");
    uint64_t hwm = 0;
    assert_int_equal(tn_fence_pg_get(c, resource, len, &hwm, &em), 0);
    assert_int_equal(hwm, 403);
    PQfinish(c);
}

static void test_fence_pg__sql_function_for_any_client(void **state)
{
    (void)state;
    PGconn *c = connect_pg();
    assert_int_equal(tn_fence_pg_migrate(c, NULL), 0);
    char name[80];
    (void)snprintf(name, sizeof(name), "%s-sql", resource);
    const char *p1[2] = {name, "10"};
    const char *p2[2] = {name, "9"};
    const char *sql = "SELECT tenure_fence_advance($1, $2::bigint)";
    PGresult *r = PQexecParams(c, sql, 2, NULL, p1, NULL, NULL, 0);
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    assert_string_equal(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    r = PQexecParams(c, sql, 2, NULL, p2, NULL, NULL, 0);
    assert_string_equal(PQgetvalue(r, 0, 0), "f");
    PQclear(r);
    r = PQexecParams(c, sql, 2, NULL, p1, NULL, NULL, 0);
    assert_string_equal(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    PQfinish(c);
}

/* Two transactions race: the second blocks on the row, then sees the
 * first's committed mark and is rejected. */
static void test_fence_pg__concurrent_writers_serialise(void **state)
{
    (void)state;
    char name[80];
    (void)snprintf(name, sizeof(name), "%s-race", resource);
    size_t len = strlen(name);
    PGconn *a = connect_pg();
    PGconn *b = connect_pg();
    assert_int_equal(tn_fence_pg_migrate(a, NULL), 0);
    exec_ok(a, "BEGIN");
    exec_ok(b, "BEGIN");
    assert_int_equal(tn_fence_pg_advance(a, name, len, 50, NULL, NULL), 0);
    /* b's advance must wait for a: send it asynchronously. */
    char digits[21];
    tn_fence_format_token(40, digits);
    const char *p[2] = {name, digits};
    assert_int_equal(PQsendQueryParams(b,
                                       "SELECT tenure_fence_advance($1,"
                                       " $2::bigint)",
                                       2, NULL, p, NULL, NULL, 0),
                     1);
    exec_ok(a, "COMMIT");
    PGresult *r = PQgetResult(b);
    assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
    assert_string_equal(PQgetvalue(r, 0, 0), "f");
    PQclear(r);
    while ((r = PQgetResult(b)) != NULL)
        PQclear(r);
    exec_ok(b, "COMMIT");
    PQfinish(a);
    PQfinish(b);
}

int main(void)
{
    pg_url = getenv("TENURE_TEST_PG_URL");
    if (pg_url == NULL || pg_url[0] == '\0') {
        printf("skip: TENURE_TEST_PG_URL is not set"
               " (make check sets it via scripts/with-pg.sh)\n");
        return 77;
    }
    (void)snprintf(resource, sizeof(resource), "test-fence-pg:%d",
                   (int)getpid());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fence_pg__migrate_is_idempotent_and_concurrent),
        cmocka_unit_test(test_fence_pg__rule_via_c_helper),
        cmocka_unit_test(test_fence_pg__sql_function_for_any_client),
        cmocka_unit_test(test_fence_pg__concurrent_writers_serialise),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
