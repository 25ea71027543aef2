/* SPDX-License-Identifier: MIT */
/* The embedded store's disk layer (src/store/embedded/disk.c) on real
 * SQLite and journal files in a temporary directory: open makes a fresh
 * store and refuses a second opener; a batch written is loaded by the next
 * open with every field; a clean close leaves the whole state in
 * tenure.db; a small journal is sealed and compacted in the background and
 * nothing is lost across it; a retirement deletes the row and raises the
 * floor; probe and recover on a healthy disk succeed.  (Crashes without a
 * close and the last-image rule of compaction: test_journal.c.) */
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tenure/err.h>

#include "common/buf.h"
#include "store/embedded/disk.h"
#include "tn_test.h"

#include <cmocka.h>

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/tn-disk.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

/* A batch of rows; strings in b.strings. */
struct mk {
    struct tn_batch b;
    struct tn_row rows[8];
};

static size_t str(struct mk *m, const char *s)
{
    if (s == NULL)
        return SIZE_MAX;
    size_t off = m->b.strings.len;
    assert_int_equal(tn_buf_append(&m->b.strings, s, strlen(s) + 1), 0);
    return off;
}

static void mk_init(struct mk *m)
{
    memset(m, 0, sizeof(*m));
    tn_buf_init(&m->b.strings, 1 << 20);
    m->b.rows = m->rows;
}

/* Lease id (row id id) granted with token tok. */
static void grant(struct mk *m, uint32_t id, uint64_t tok)
{
    char name[32], owner[32];
    snprintf(name, sizeof(name), "job/%u", id);
    snprintf(owner, sizeof(owner), "worker-%llu", (unsigned long long)tok);
    struct tn_row *r = &m->rows[m->b.n_rows++];
    r->row_id = id;
    r->name_off = str(m, name);
    r->owner_off = str(m, owner);
    r->rid_off = str(m, id % 2 ? "rid" : NULL);
    r->principal_off = str(m, id % 3 ? NULL : "svc");
    r->token = tok;
    for (int k = 0; k < TN_SECRET_BYTES; k++)
        r->secret[k] = (uint8_t)(tok + (uint64_t)k);
    r->ttl_ms = 10000;
    r->expires_at_ms = 1000000 + (int64_t)tok;
    r->lock_delay_ms = 7;
    r->held = true;
    if (tok > m->b.last_token)
        m->b.last_token = tok;
}

static void write_grants(struct tn_disk *d, uint32_t first, uint32_t n,
                         uint64_t tok0)
{
    for (uint32_t i = 0; i < n; i++) {
        struct mk m;
        mk_init(&m);
        grant(&m, first + i, tok0 + i);
        assert_int_equal(tn_disk_write(d, &m.b), 0);
        tn_buf_release(&m.b.strings);
    }
}

static struct tn_disk *dopen(uint64_t journal_bytes)
{
    struct tn_disk *d = NULL;
    struct tn_errmsg em = {{0}};
    int rc = tn_disk_open(dir, journal_bytes, &d, &em);
    if (rc != 0)
        fail_msg("tn_disk_open: %d %s", rc, em.text);
    return d;
}

static void load(struct tn_disk *d, struct tn_lease_table *t)
{
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_lease_table_init(t, 1024), 0);
    assert_int_equal(tn_disk_load(d, t, 0, true, &em), 0);
}

static unsigned long long metric(struct tn_disk *d, const char *name)
{
    struct tn_buf out;
    char key[96];
    unsigned long long v = ~0ull;
    tn_buf_init(&out, 1 << 16);
    tn_disk_metrics(d, &out);
    snprintf(key, sizeof(key), "\n%s ", name);
    const char *p = strstr(out.data, key);
    if (p != NULL && sscanf(p + strlen(key), "%llu", &v) != 1)
        v = ~0ull;
    tn_buf_release(&out);
    return v;
}

/* Rows of tenure.db itself, read with SQLite (no journal replay). */
static int count_cb(void *ctx, int n, char **v, char **cols)
{
    (void)n;
    (void)cols;
    *(long *)ctx = strtol(v[0], NULL, 10);
    return 0;
}

static long file_rows(void)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/tenure.db", dir);
    sqlite3 *db = NULL;
    long n = -1;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db, "SELECT count(*) FROM leases", count_cb, &n, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    return n;
}

static void test_disk__open_fresh(void **state)
{
    (void)state;
    struct tn_disk *d = dopen(0);
    char path[128];
    struct stat st;
    snprintf(path, sizeof(path), "%s/tenure.db", dir);
    assert_int_equal(stat(path, &st), 0);
    struct tn_lease_table t;
    load(d, &t);
    assert_int_equal(tn_lease_table_count(&t), 0);
    assert_int_equal(t.last_token, 0);
    tn_lease_table_release(&t);
    assert_int_equal(metric(d, "tenure_journal_compacted_generation"), 0);
    tn_disk_close(d);
}

static void test_disk__second_opener_refused(void **state)
{
    (void)state;
    struct tn_disk *d = dopen(0);
    write_grants(d, 1, 1, 5);
    struct tn_disk *d2 = NULL;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_disk_open(dir, 0, &d2, &em), TN_EBUSY);
    assert_null(d2);
    assert_true(em.text[0] != '\0');
    tn_disk_close(d);
    /* once closed, the next opener gets it, with what was written */
    d = dopen(0);
    struct tn_lease_table t;
    load(d, &t);
    assert_int_equal(tn_lease_table_count(&t), 1);
    tn_lease_table_release(&t);
    tn_disk_close(d);
}

static void test_disk__missing_dir(void **state)
{
    (void)state;
    struct tn_disk *d = NULL;
    struct tn_errmsg em = {{0}};
    char path[128];
    snprintf(path, sizeof(path), "%s/no/such/dir", dir);
    int rc = tn_disk_open(path, 0, &d, &em);
    assert_true(rc < 0);
    assert_null(d);
    assert_true(em.text[0] != '\0');
}

/* Written, closed, reopened: every field comes back. */
static void test_disk__reopen_keeps_rows(void **state)
{
    (void)state;
    struct tn_disk *d = dopen(0);
    struct mk m;
    mk_init(&m);
    for (uint32_t id = 1; id <= 6; id++)
        grant(&m, id, 100 + id);
    m.rows[1].held = false; /* released */
    assert_int_equal(tn_disk_write(d, &m.b), 0);
    tn_disk_close(d);
    /* a clean close leaves everything in tenure.db itself */
    assert_int_equal(file_rows(), 6);

    d = dopen(0);
    struct tn_lease_table t;
    load(d, &t);
    assert_int_equal(tn_lease_table_count(&t), 6);
    assert_int_equal(t.last_token, 106);
    for (size_t i = 0; i < 6; i++) {
        const struct tn_row *r = &m.rows[i];
        const char *name = tn_batch_str(&m.b, r->name_off);
        const struct tn_lease_entry *l = tn_lease_find(&t, name, strlen(name));
        assert_non_null(l);
        assert_int_equal(l->token, r->token);
        assert_int_equal(l->held, r->held);
        assert_int_equal(l->row_id, r->row_id);
        assert_int_equal(l->ttl_ms, r->ttl_ms);
        assert_int_equal(l->lock_delay_ms, r->lock_delay_ms);
        assert_string_equal(l->owner_id, tn_batch_str(&m.b, r->owner_off));
        const char *rid = tn_batch_str(&m.b, r->rid_off);
        if (rid == NULL)
            assert_null(l->request_id);
        else
            assert_string_equal(l->request_id, rid);
        const char *pr = tn_batch_str(&m.b, r->principal_off);
        if (pr == NULL)
            assert_null(l->principal);
        else
            assert_string_equal(l->principal, pr);
        if (r->held)
            assert_memory_equal(l->secret, r->secret, TN_SECRET_BYTES);
    }
    tn_lease_table_release(&t);
    tn_buf_release(&m.b.strings);
    tn_disk_close(d);
}

/* A later image of a row replaces the earlier one; a retirement deletes
 * the row and its floor covers the name's tokens. */
static void test_disk__rewrite_and_retire(void **state)
{
    (void)state;
    struct tn_disk *d = dopen(0);
    write_grants(d, 1, 3, 10); /* job/1..3, tokens 10..12 */
    struct mk m;
    mk_init(&m);
    grant(&m, 2, 20); /* job/2 again */
    struct tn_row *r = &m.rows[m.b.n_rows++];
    memset(r, 0, sizeof(*r));
    r->row_id = 3;
    r->name_off = str(&m, "job/3");
    r->owner_off = str(&m, "");
    r->rid_off = r->principal_off = SIZE_MAX;
    r->token = 21; /* the floor: the token counter at the retirement */
    r->retired = true;
    m.b.last_token = 21;
    assert_int_equal(tn_disk_write(d, &m.b), 0);
    tn_buf_release(&m.b.strings);
    tn_disk_close(d);

    d = dopen(0);
    struct tn_lease_table t;
    load(d, &t);
    assert_int_equal(tn_lease_table_count(&t), 2);
    const struct tn_lease_entry *l = tn_lease_find(&t, "job/2", 5);
    assert_non_null(l);
    assert_int_equal(l->token, 20);
    assert_null(tn_lease_find(&t, "job/3", 5));
    assert_true(t.retired_floor >= 21);
    assert_int_equal(t.last_token, 21);
    tn_lease_table_release(&t);
    tn_disk_close(d);
}

/* With the smallest journal, generations are sealed and compacted in the
 * background while writes go on; then everything is there. */
static void test_disk__compaction(void **state)
{
    (void)state;
    struct tn_disk *d = dopen(65536);
    uint32_t n = 0;
    struct timespec pause = {.tv_nsec = 2000000};
    for (int round = 0; round < 20000; round++) {
        write_grants(d, n + 1, 100, 1000 + n);
        n += 100;
        if (metric(d, "tenure_journal_compacted_generation") >= 2)
            break;
        if (round > 50)
            nanosleep(&pause, NULL); /* a slow machine: let it catch up */
    }
    assert_true(metric(d, "tenure_journal_compacted_generation") >= 2);
    assert_true(metric(d, "tenure_journal_generation") >= 3);
    assert_true(metric(d, "tenure_journal_compacted_rows_total") > 0);
    assert_int_equal(metric(d, "tenure_journal_compactions_total{result="
                               "\"failed\"}"),
                     0);
    assert_int_equal(tn_disk_probe(d), 0);
    assert_int_equal(tn_disk_recover(d), 0);
    struct tn_lease_table t;
    load(d, &t); /* waits for a running compaction */
    tn_lease_table_release(&t);
    tn_disk_close(d);
    assert_int_equal(file_rows(), n);

    d = dopen(65536);
    load(d, &t);
    assert_int_equal(tn_lease_table_count(&t), n);
    assert_int_equal(t.last_token, 1000 + n - 1);
    for (uint32_t id = 1; id <= n; id += 97) {
        char name[32];
        snprintf(name, sizeof(name), "job/%u", id);
        const struct tn_lease_entry *l = tn_lease_find(&t, name, strlen(name));
        assert_non_null(l);
        assert_int_equal(l->token, 1000 + id - 1);
    }
    tn_lease_table_release(&t);
    tn_disk_close(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_disk__open_fresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk__second_opener_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_disk__missing_dir, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_disk__reopen_keeps_rows, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_disk__rewrite_and_retire, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_disk__compaction, setup, teardown),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
