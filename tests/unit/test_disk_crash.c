/* SPDX-License-Identifier: MIT */
/* The disk layer over the journal (src/store/embedded/disk.c), on real
 * files in a temporary directory: a process that dies without closing
 * loses nothing it was told was durable, across many compactions; and a
 * compaction leaves each row's last image. */
#include <fcntl.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "journal_fixture.h"
#include "store/embedded/disk.h"
#include "store/embedded/journal.h"
#include "tn_test.h"

#include <cmocka.h>

static unsigned long long metric(struct tn_disk *d, const char *name)
{
    struct tn_buf out;
    char key[96];
    unsigned long long v = 0;
    tn_buf_init(&out, 1 << 16);
    tn_disk_metrics(d, &out);
    snprintf(key, sizeof(key), "\n%s ", name);
    const char *p = strstr(out.data, key);
    if (p == NULL || sscanf(p + strlen(key), "%llu", &v) != 1)
        v = ~0ull;
    tn_buf_release(&out);
    return v;
}

/* The disk layer: a child writes many batches with a tiny journal (so
 * that many generations are sealed and compacted) and dies without
 * closing, as under kill -9; everything it was told was durable is in
 * the table loaded by the next open, and the token counter too. */
static void test_disk_crash(void **state)
{
    (void)state;
    const uint64_t n = 600;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct tn_disk *d = NULL;
        struct tn_errmsg em = {{0}};
        if (tn_disk_open(dir, 65536, &d, &em) < 0)
            _exit(2);
        for (uint64_t rec = 1; rec <= n; rec++) {
            struct mk m;
            make(&m, rec);
            if (tn_disk_write(d, &m.b) < 0)
                _exit(3);
            unmake(&m);
        }
        _exit(0); /* no close: no final compaction */
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

    struct tn_disk *d = NULL;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_disk_open(dir, 65536, &d, &em), 0);
    struct tn_lease_table t;
    assert_int_equal(tn_lease_table_init(&t, 4096), 0);
    assert_int_equal(tn_disk_load(d, &t, 0, true, &em), 0);
    size_t want = 0;
    for (uint64_t rec = 1; rec <= n; rec++) {
        struct mk m;
        make(&m, rec);
        for (size_t i = 0; i < m.b.n_rows; i++) {
            const char *name = tn_batch_str(&m.b, m.rows[i].name_off);
            const struct tn_lease_entry *l =
                tn_lease_find(&t, name, strlen(name));
            assert_non_null(l);
            assert_int_equal(l->token, m.rows[i].token);
            assert_int_equal(l->held, m.rows[i].held);
            /* through tenure.db's held column (2 = ended) */
            assert_int_equal(l->expiry_noted, m.rows[i].ended);
            want++;
        }
        unmake(&m);
    }
    assert_int_equal(t.map.count, want);
    assert_int_equal(t.last_token, n * 10);
    /* The child's journal held many generations (64 KiB each). */
    assert_true(metric(d, "tenure_journal_compacted_generation") >= 4);
    tn_lease_table_release(&t);
    tn_disk_close(d);
}

/* Compaction writes only the last image of each row of a generation.
 * Phase 1 rewrites 50 rows over and over, across records and inside one;
 * phase 2 writes other rows until phase 1's generations are compacted.
 * Then tenure.db itself, read before any replay, must hold each of the 50
 * rows' last image, never an earlier one. */
static void rewrite(struct mk *m, uint64_t rec)
{
    memset(m, 0, sizeof(*m));
    tn_buf_init(&m->b.strings, 1 << 20);
    m->b.rows = m->rows;
    m->b.n_rows = 4;
    m->b.last_token = rec * 10 + 3;
    for (size_t k = 0; k < 4; k++) {
        struct tn_row *r = &m->rows[k];
        char name[32], owner[32];
        /* k = 3 rewrites the row k = 0 wrote, inside the same record */
        uint32_t id = (uint32_t)((rec * 3 + (k == 3 ? 0 : k)) % 50) + 1;
        snprintf(name, sizeof(name), "row:%u", id);
        snprintf(owner, sizeof(owner), "o%llu.%zu", (unsigned long long)rec, k);
        r->row_id = id;
        r->name_off = add_str(&m->b, name);
        r->owner_off = add_str(&m->b, owner);
        r->rid_off = r->principal_off = SIZE_MAX;
        r->token = rec * 10 + k;
        r->ttl_ms = 1000;
        r->held = true;
    }
}

#define PHASE1 400

/* The child: phase 1, then phase 2 until phase 1 is in tenure.db; dies
 * without closing.  Exit status 0 when it got there. */
static int last_image_child(void)
{
    struct tn_disk *d = NULL;
    struct tn_errmsg em = {{0}};
    if (tn_disk_open(dir, 65536, &d, &em) < 0)
        return 2;
    for (uint64_t rec = 1; rec <= PHASE1; rec++) {
        struct mk m;
        rewrite(&m, rec);
        if (tn_disk_write(d, &m.b) < 0)
            return 3;
        unmake(&m);
    }
    unsigned long long g1 = metric(d, "tenure_journal_generation");
    for (uint64_t rec = 1000; rec < 100000; rec++) {
        if (metric(d, "tenure_journal_compacted_generation") >= g1)
            return 0;
        struct mk m;
        make(&m, rec); /* row ids rec * 100 + i: not phase 1's */
        if (tn_disk_write(d, &m.b) < 0)
            return 3;
        unmake(&m);
    }
    return 4;
}

static int read_row(void *ctx, int n, char **v, char **cols)
{
    (void)cols;
    struct {
        uint64_t tok[51];
        char owner[51][32];
        int rows;
    } *got = ctx;
    assert_int_equal(n, 3);
    unsigned id = (unsigned)strtoul(v[0], NULL, 10);
    if (id >= 1 && id <= 50) {
        got->tok[id] = strtoull(v[1], NULL, 10);
        snprintf(got->owner[id], sizeof(got->owner[id]), "%s", v[2]);
        got->rows++;
    }
    return 0;
}

static void test_disk_last_image(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(last_image_child());
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    /* What compactions alone left in the file. */
    struct {
        uint64_t tok[51];
        char owner[51][32];
        int rows;
    } got = {0};
    char path[128];
    snprintf(path, sizeof(path), "%s/tenure.db", dir);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "SELECT id, token, owner_id FROM leases"
                                  " WHERE id <= 50",
                                  read_row, &got, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(got.rows, 50);
    for (uint64_t rec = PHASE1 - 20; rec <= PHASE1; rec++) {
        struct mk m;
        rewrite(&m, rec);
        for (size_t k = 0; k < 4; k++) {
            uint32_t id = m.rows[k].row_id;
            uint64_t want = 0;
            /* the last (rec, k) that wrote id */
            for (uint64_t r2 = PHASE1; r2 >= rec && want == 0; r2--) {
                struct mk m2;
                rewrite(&m2, r2);
                for (int k2 = 3; k2 >= 0 && want == 0; k2--)
                    if (m2.rows[k2].row_id == id)
                        want = m2.rows[k2].token;
                unmake(&m2);
            }
            assert_int_equal(got.tok[id], want);
            char owner[32];
            snprintf(owner, sizeof(owner), "o%llu.%llu",
                     (unsigned long long)(want / 10),
                     (unsigned long long)(want % 10));
            assert_string_equal(got.owner[id], owner);
        }
        unmake(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_disk_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_last_image, setup, teardown),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
