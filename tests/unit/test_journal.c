/* SPDX-License-Identifier: MIT */
/* The embedded store's journal (src/store/embedded/journal.c) and the disk
 * layer over it (src/store/embedded/disk.c), on real files in a temporary
 * directory: records come back as written; a torn last append is dropped
 * whatever the point where it was cut; damage that is not a torn tail, a
 * generation cut short and a missing generation are refused; a reused file's
 * leftovers are not read; a process that dies without closing loses
 * nothing it was told was durable, across many compactions; and a
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
#include "store/embedded/disk.h"
#include "store/embedded/journal.h"
#include "tn_test.h"

#include <cmocka.h>

#define MAX_ROWS 8

/* A batch built by hand: rows whose fields derive from (rec, i). */
struct mk {
    struct tn_batch b;
    struct tn_row rows[MAX_ROWS];
};

static size_t add_str(struct tn_batch *b, const char *s)
{
    if (s == NULL)
        return SIZE_MAX;
    size_t off = b->strings.len;
    assert_int_equal(tn_buf_append(&b->strings, s, strlen(s) + 1), 0);
    return off;
}

/* Record number rec (1-based overall) has rec % MAX_ROWS rows (so some are
 * empty, like heartbeats); row i of it is lease rec * 100 + i. */
static void make(struct mk *m, uint64_t rec)
{
    memset(m, 0, sizeof(*m));
    tn_buf_init(&m->b.strings, 1 << 20);
    m->b.rows = m->rows;
    m->b.n_rows = rec % MAX_ROWS;
    m->b.last_token = rec * 10;
    for (size_t i = 0; i < m->b.n_rows; i++) {
        struct tn_row *r = &m->rows[i];
        char name[64], owner[64], rid[64];
        uint32_t id = (uint32_t)(rec * 100 + i);
        snprintf(name, sizeof(name), "shard:%u", id);
        snprintf(owner, sizeof(owner), "owner-%llu", (unsigned long long)rec);
        snprintf(rid, sizeof(rid), "rid-%u", id);
        r->row_id = id;
        r->name_off = add_str(&m->b, name);
        r->owner_off = add_str(&m->b, i == 1 ? "" : owner);
        r->rid_off = add_str(&m->b, i % 2 ? rid : NULL);
        r->principal_off = add_str(&m->b, i % 3 == 2 ? "indexer" : NULL);
        r->token = rec * 10 - i;
        for (int k = 0; k < TN_SECRET_BYTES; k++)
            r->secret[k] = (uint8_t)(id * 7 + (uint32_t)k);
        r->ttl_ms = 1000 + (int64_t)i;
        r->expires_at_ms = -5 - (int64_t)rec; /* negative survives too */
        r->lock_delay_ms = (int64_t)i * 3;
        r->held = i % 2 == 0;
        r->ended = r->held && i % 4 == 0; /* an expiry recorded */
    }
}

static void unmake(struct mk *m)
{
    tn_buf_release(&m->b.strings);
}

static void same_str(const struct tn_batch *a, size_t ao,
                     const struct tn_batch *b, size_t bo)
{
    const char *x = tn_batch_str(a, ao), *y = tn_batch_str(b, bo);
    if (x == NULL || y == NULL)
        assert_true(x == NULL && y == NULL);
    else
        assert_string_equal(x, y);
}

/* The records a replay handed over, checked against make(). */
struct seen {
    uint64_t n;        /* records */
    uint64_t first;    /* record number of the first one (make's rec) */
    uint64_t gens[64]; /* generation of each */
};

static int check_rec(void *ctx, const struct tn_journal_rec *r)
{
    struct seen *s = ctx;
    struct mk m;
    make(&m, s->first + s->n);
    const struct tn_batch *b = r->batch;
    assert_int_equal(b->n_rows, m.b.n_rows);
    assert_int_equal(b->last_token, m.b.last_token);
    assert_int_equal(r->alive_at_ms, (int64_t)(s->first + s->n) * 1000);
    for (size_t i = 0; i < b->n_rows; i++) {
        const struct tn_row *x = &b->rows[i], *y = &m.rows[i];
        assert_int_equal(x->row_id, y->row_id);
        assert_int_equal(x->token, y->token);
        assert_int_equal(x->ttl_ms, y->ttl_ms);
        assert_int_equal(x->expires_at_ms, y->expires_at_ms);
        assert_int_equal(x->lock_delay_ms, y->lock_delay_ms);
        assert_int_equal(x->held, y->held);
        assert_int_equal(x->ended, y->ended);
        assert_memory_equal(x->secret, y->secret, TN_SECRET_BYTES);
        same_str(b, x->name_off, &m.b, y->name_off);
        same_str(b, x->owner_off, &m.b, y->owner_off);
        same_str(b, x->rid_off, &m.b, y->rid_off);
        same_str(b, x->principal_off, &m.b, y->principal_off);
    }
    if (s->n < 64)
        s->gens[s->n] = r->gen;
    s->n++;
    unmake(&m);
    return 0;
}

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/tn-journal.XXXXXX");
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

static struct tn_journal *jopen(void)
{
    struct tn_journal *j = NULL;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_journal_open(dir, &j, &em), 0);
    return j;
}

/* Append records first .. first + n - 1 (make's numbering). */
static void append(struct tn_journal *j, uint64_t first, uint64_t n)
{
    for (uint64_t rec = first; rec < first + n; rec++) {
        struct mk m;
        int64_t us;
        make(&m, rec);
        assert_int_equal(tn_journal_append(j, &m.b, (int64_t)rec * 1000, &us),
                         0);
        unmake(&m);
    }
}

static int replay(uint64_t after, uint64_t first, struct seen *s,
                  uint64_t *last)
{
    struct tn_journal *j = jopen();
    struct tn_errmsg em = {{0}};
    memset(s, 0, sizeof(*s));
    s->first = first;
    int rc = tn_journal_replay(j, after, check_rec, s, last, &em);
    tn_journal_close(j);
    return rc;
}

static char *path_of(int i)
{
    static char p[2][128];
    snprintf(p[i], sizeof(p[i]), "%s/journal-%d", dir, i);
    return p[i];
}

static void read_whole(int i, unsigned char **data, size_t *size)
{
    FILE *f = fopen(path_of(i), "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    *data = malloc(*size);
    assert_int_equal(fread(*data, 1, *size, f), *size);
    fclose(f);
}

static void write_whole(int i, const unsigned char *data, size_t size)
{
    FILE *f = fopen(path_of(i), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    fclose(f);
}

static void test_roundtrip(void **state)
{
    (void)state;
    struct tn_journal *j = jopen();
    tn_journal_begin(j, 1, 0);
    append(j, 1, 20);
    assert_int_equal(tn_journal_gen(j), 1);
    assert_true(tn_journal_bytes(j) % TN_JOURNAL_ALIGN == 0);
    tn_journal_close(j);
    struct seen s;
    uint64_t last = 0;
    assert_int_equal(replay(0, 1, &s, &last), 0);
    assert_int_equal(s.n, 20);
    assert_int_equal(last, 1);
    /* Nothing newer than generation 1: nothing to replay. */
    assert_int_equal(replay(1, 1, &s, &last), 0);
    assert_int_equal(s.n, 0);
    assert_int_equal(last, 1);
}

/* Offset of record k (0-based) of generation 1 in file 1. */
static size_t offset_of(const unsigned char *data, size_t size, int k)
{
    size_t off = 0;
    for (int i = 0; i < k; i++) {
        assert_true(off + TN_JOURNAL_HEADER <= size);
        uint32_t len =
            (uint32_t)data[off + 12] | (uint32_t)data[off + 13] << 8 |
            (uint32_t)data[off + 14] << 16 | (uint32_t)data[off + 15] << 24;
        off += (TN_JOURNAL_HEADER + len + TN_JOURNAL_ALIGN - 1) /
               TN_JOURNAL_ALIGN * TN_JOURNAL_ALIGN;
    }
    return off;
}

/* A torn last append: its first `cut` bytes reached the disk, the rest is
 * what was there before (zeros, or garbage).  Every cut drops exactly the
 * last record. */
static void test_torn_tail(void **state)
{
    (void)state;
    struct tn_journal *j = jopen();
    tn_journal_begin(j, 1, 0);
    append(j, 1, 6); /* record 6 has 6 rows: longer than one sector */
    tn_journal_close(j);
    unsigned char *good;
    size_t size;
    read_whole(1, &good, &size);
    size_t start = offset_of(good, size, 5);
    /* The bytes that matter: header and payload (not the zero padding). */
    size_t end = start + TN_JOURNAL_HEADER +
                 ((uint32_t)good[start + 12] | (uint32_t)good[start + 13] << 8);
    assert_true(end - start > TN_JOURNAL_ALIGN);
    unsigned char *img = malloc(size);
    int cuts = 0;
    for (size_t cut = 0; cut < end - start; cut += (cut < 48 ? 1 : 29)) {
        for (int garbage = 0; garbage < 2; garbage++) {
            memcpy(img, good, size);
            for (size_t o = start + cut; o < end; o++)
                img[o] = garbage ? (unsigned char)(o * 131 + 7) : 0;
            write_whole(1, img, size);
            struct seen s;
            uint64_t last;
            assert_int_equal(replay(0, 1, &s, &last), 0);
            assert_int_equal(s.n, 5);
            cuts++;
        }
    }
    assert_true(cuts > 100);
    /* One flipped bit anywhere in the last record drops it too. */
    for (size_t o = start; o < end; o += 37) {
        memcpy(img, good, size);
        img[o] ^= 0x10;
        write_whole(1, img, size);
        struct seen s;
        uint64_t last;
        assert_int_equal(replay(0, 1, &s, &last), 0);
        assert_int_equal(s.n, 5);
    }
    free(img);
    free(good);
}

/* A bad record followed by good ones of its generation is damage, not a
 * torn tail: replay refuses rather than silently drop acknowledged data. */
static void test_damage_refused(void **state)
{
    (void)state;
    struct tn_journal *j = jopen();
    tn_journal_begin(j, 1, 0);
    append(j, 1, 5);
    tn_journal_close(j);
    unsigned char *data;
    size_t size;
    read_whole(1, &data, &size);
    size_t o = offset_of(data, size, 1) + TN_JOURNAL_HEADER + 3;
    data[o] ^= 0x01;
    write_whole(1, data, size);
    free(data);
    struct seen s;
    uint64_t last;
    assert_int_equal(replay(0, 1, &s, &last), TN_EIO);
}

/* The (pass, seq) of each record handed over. */
struct order {
    unsigned n;
    unsigned pass[16];
    uint64_t seq[16];
};

static int note_order(void *ctx, const struct tn_journal_rec *r)
{
    struct order *o = ctx;
    assert_true(o->n < 16);
    o->pass[o->n] = r->pass;
    o->seq[o->n++] = r->seq;
    return 0;
}

/* Generations: a sealed one is read alone by read_gen; a file reused for
 * a newer generation keeps leftovers of an older one past its records,
 * which are never read; a generation shorter than its successor says, or
 * a missing one, is refused. */
static void test_generations(void **state)
{
    (void)state;
    struct tn_journal *j = jopen();
    tn_journal_begin(j, 1, 0);
    append(j, 1, 5); /* gen 1 in file 1 */
    assert_int_equal(tn_journal_seal(j), 1);
    append(j, 6, 2); /* gen 2 in file 0 */
    struct seen s = {.first = 1};
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_journal_read_gen(j, 1, 1, check_rec, &s, &em), 0);
    assert_int_equal(s.n, 5);
    /* Two passes: the same records, in order, once per pass. */
    struct order ord = {0};
    assert_int_equal(tn_journal_read_gen(j, 1, 2, note_order, &ord, &em), 0);
    assert_int_equal(ord.n, 10);
    for (unsigned k = 0; k < 10; k++) {
        assert_int_equal(ord.pass[k], k / 5);
        assert_int_equal(ord.seq[k], k % 5 + 1);
    }
    tn_journal_close(j);

    uint64_t last;
    assert_int_equal(replay(0, 1, &s, &last), 0);
    assert_int_equal(s.n, 7);
    assert_int_equal(last, 2);
    assert_int_equal(s.gens[4], 1);
    assert_int_equal(s.gens[5], 2);
    assert_int_equal(replay(1, 6, &s, &last), 0);
    assert_int_equal(s.n, 2);

    /* Gen 1 cut short: its last record torn after gen 2 began. */
    unsigned char *data;
    size_t size;
    read_whole(1, &data, &size);
    unsigned char *copy = malloc(size);
    memcpy(copy, data, size);
    size_t o = offset_of(data, size, 4);
    memset(data + o, 0, TN_JOURNAL_HEADER);
    write_whole(1, data, size);
    assert_int_equal(replay(0, 1, &s, &last), TN_EIO);
    write_whole(1, copy, size);
    free(copy);
    free(data);

    /* Reuse file 1 for gen 3 with one short record: gen 1's leftovers
     * stay behind it. */
    j = jopen();
    tn_journal_begin(j, 2, 5);
    append(j, 6, 2); /* rewrite gen 2 the same way */
    assert_int_equal(tn_journal_seal(j), 2);
    append(j, 8, 1); /* gen 3, file 1, offset 0 */
    tn_journal_close(j);
    assert_int_equal(replay(2, 8, &s, &last), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(last, 3);
    assert_int_equal(replay(1, 6, &s, &last), 0);
    assert_int_equal(s.n, 3);
    /* Generation 1 is gone (file 1 now holds 3): nothing may pretend
     * that generations 2 and 3 follow 0. */
    assert_int_equal(replay(0, 1, &s, &last), TN_EIO);
}

/* A value of tn_disk_metrics (~0 when missing). */
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
        cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damage_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_last_image, setup, teardown),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
