/* SPDX-License-Identifier: MIT */
/* The rule of src/fence/fence.c over every backend of libtenure through
 * struct tn_fence_ops: SQLite (a connection and its prepared statements)
 * and in memory.  Each case runs the same contract on each backend: equal
 * tokens admitted, lower ones rejected with the mark unchanged, the mark
 * before reported, bad arguments refused, and (for a backend with
 * transactions) no check outside one.  PostgreSQL's ops run the same
 * contract in test_fence_pg. */
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tenure/fence.h>
#include <tenure/fence_mem.h>
#include <tenure/fence_sqlite.h>

#include "tn_test.h"

#include <cmocka.h>

/* One backend under test: its ops, its conn, and how to open and end a
 * transaction on it (no-ops in memory). */
struct backend {
    const struct tn_fence_ops *ops;
    void *conn;
    sqlite3 *db;                  /* SQLite backends */
    struct tn_fence_sqlite *prep; /* the prepared one */
    struct tn_fence_mem *mem;     /* the in-memory one */
};

enum kind { SQLITE, SQLITE_PREPARED, MEM };

static void backend_open(struct backend *b, enum kind k)
{
    memset(b, 0, sizeof(*b));
    if (k == MEM) {
        b->mem = tn_fence_mem_new(16);
        assert_non_null(b->mem);
        b->ops = &tn_fence_mem_ops;
        b->conn = b->mem;
        return;
    }
    assert_int_equal(sqlite3_open(":memory:", &b->db), SQLITE_OK);
    assert_int_equal(tn_fence_sqlite_migrate(b->db, NULL), 0);
    b->ops = &tn_fence_sqlite_ops;
    b->conn = b->db;
    if (k == SQLITE_PREPARED) {
        assert_int_equal(tn_fence_sqlite_prepare(b->db, &b->prep, NULL), 0);
        b->ops = &tn_fence_sqlite_prepared_ops;
        b->conn = b->prep;
    }
}

static void backend_begin(struct backend *b)
{
    if (b->db != NULL)
        assert_int_equal(sqlite3_exec(b->db, "BEGIN", NULL, NULL, NULL),
                         SQLITE_OK);
}

static void backend_commit(struct backend *b)
{
    if (b->db != NULL)
        assert_int_equal(sqlite3_exec(b->db, "COMMIT", NULL, NULL, NULL),
                         SQLITE_OK);
}

static void backend_close(struct backend *b)
{
    tn_fence_sqlite_finalize(b->prep);
    if (b->db != NULL)
        sqlite3_close(b->db);
    tn_fence_mem_free(b->mem);
}

static int advance(struct backend *b, const char *res, uint64_t token,
                   uint64_t *before)
{
    return tn_fence_advance(b->ops, b->conn, res, strlen(res), token, before,
                            NULL);
}

static uint64_t mark(struct backend *b, const char *res)
{
    uint64_t hwm = 99;
    assert_int_equal(
        tn_fence_get(b->ops, b->conn, res, strlen(res), &hwm, NULL), 0);
    return hwm;
}

static void contract(enum kind k)
{
    struct backend b;
    backend_open(&b, k);
    backend_begin(&b);
    uint64_t before = 99;
    assert_int_equal(mark(&b, "r"), 0);
    assert_int_equal(advance(&b, "r", 5, &before), 0);
    assert_int_equal(before, 0);                       /* no mark yet */
    assert_int_equal(advance(&b, "r", 5, &before), 0); /* equal: admitted */
    assert_int_equal(before, 5);
    assert_int_equal(advance(&b, "r", 4, &before), TN_ESTALE);
    assert_int_equal(before, 5);
    assert_int_equal(mark(&b, "r"), 5); /* never moves down */
    assert_int_equal(advance(&b, "r", 9, NULL), 0);
    assert_int_equal(mark(&b, "r"), 9);
    assert_int_equal(advance(&b, "other", 1, NULL), 0); /* per resource */
    assert_int_equal(mark(&b, "r"), 9);
    backend_commit(&b);
    backend_close(&b);
}

static void test_fence_ops__contract_sqlite(void **state)
{
    (void)state;
    contract(SQLITE);
}

static void test_fence_ops__contract_sqlite_prepared(void **state)
{
    (void)state;
    contract(SQLITE_PREPARED);
}

static void test_fence_ops__contract_mem(void **state)
{
    (void)state;
    contract(MEM);
}

static void bad_arguments(enum kind k)
{
    struct backend b;
    backend_open(&b, k);
    backend_begin(&b);
    char long_name[TN_FENCE_NAME_MAX + 2];
    memset(long_name, 'x', sizeof(long_name) - 1);
    long_name[sizeof(long_name) - 1] = '\0';
    assert_int_equal(advance(&b, "", 1, NULL), TN_EINVAL);
    assert_int_equal(advance(&b, long_name, 1, NULL), TN_EINVAL);
    assert_int_equal(advance(&b, "r", TN_FENCE_TOKEN_MAX + 1, NULL), TN_EINVAL);
    assert_int_equal(tn_fence_advance(b.ops, b.conn, NULL, 1, 1, NULL, NULL),
                     TN_EINVAL);
    assert_int_equal(mark(&b, "r"), 0); /* nothing was written */
    backend_commit(&b);
    backend_close(&b);
}

static void test_fence_ops__bad_arguments(void **state)
{
    (void)state;
    bad_arguments(SQLITE);
    bad_arguments(SQLITE_PREPARED);
    bad_arguments(MEM);
}

/* A check that commits apart from its write fences nothing: outside a
 * transaction the rule refuses and writes no mark. */
static void test_fence_ops__sqlite_outside_txn_refused(void **state)
{
    (void)state;
    for (int k = SQLITE; k <= SQLITE_PREPARED; k++) {
        struct backend b;
        backend_open(&b, (enum kind)k);
        struct tn_errmsg em = {{0}};
        assert_int_equal(tn_fence_advance(b.ops, b.conn, "r", 1, 3, NULL, &em),
                         TN_EINVAL);
        assert_non_null(strstr(em.text, "outside a transaction"));
        assert_int_equal(mark(&b, "r"), 0);
        backend_close(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fence_ops__contract_sqlite),
        cmocka_unit_test(test_fence_ops__contract_sqlite_prepared),
        cmocka_unit_test(test_fence_ops__contract_mem),
        cmocka_unit_test(test_fence_ops__bad_arguments),
        cmocka_unit_test(test_fence_ops__sqlite_outside_txn_refused),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
