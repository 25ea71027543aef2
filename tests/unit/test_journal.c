/* SPDX-License-Identifier: MIT */
/* The embedded store's journal (src/store/embedded/journal.c), on real
 * files in a temporary directory: records come back as written; a torn
 * last append is dropped whatever the point where it was cut; damage that
 * is not a torn tail, a generation cut short and a missing generation are
 * refused; a reused file's leftovers are not read.  The disk layer over it
 * under kill -9 and compaction is in test_disk_crash.c. */
#include <fcntl.h>
#include <setjmp.h>
#include <sodium.h>
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
        assert_false(x->session); /* make() writes lease rows only */
        assert_int_equal(x->session_row, 0);
    }
    if (s->n < 64)
        s->gens[s->n] = r->gen;
    s->n++;
    unmake(&m);
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
/* Rows of sessions and leases under them (journal version 2) come back as
 * written. */
static int check_sessions(void *ctx, const struct tn_journal_rec *r)
{
    const struct tn_batch *want = ctx, *b = r->batch;
    assert_int_equal(b->n_rows, want->n_rows);
    for (size_t i = 0; i < b->n_rows; i++) {
        const struct tn_row *x = &b->rows[i], *y = &want->rows[i];
        assert_int_equal(x->row_id, y->row_id);
        assert_int_equal(x->session, y->session);
        assert_int_equal(x->session_row, y->session_row);
        assert_int_equal(x->end, y->end);
        assert_int_equal(x->ended_at_ms, y->ended_at_ms);
        assert_int_equal(x->retired, y->retired);
        assert_int_equal(x->held, y->held);
        assert_int_equal(x->ttl_ms, y->ttl_ms);
        assert_int_equal(x->expires_at_ms, y->expires_at_ms);
        assert_memory_equal(x->secret, y->secret, TN_SECRET_BYTES);
        same_str(b, x->name_off, want, y->name_off);
        same_str(b, x->owner_off, want, y->owner_off);
        same_str(b, x->principal_off, want, y->principal_off);
    }
    return 0;
}

static void test_session_rows(void **state)
{
    (void)state;
    struct tn_row rows[3];
    struct tn_batch b = {.rows = rows, .n_rows = 3, .last_token = 9};
    memset(rows, 0, sizeof(rows));
    tn_buf_init(&b.strings, 1 << 16);
    /* A lease under session row 4; that session, ended (released); and
     * session row 5, gone. */
    rows[0] = (struct tn_row){.row_id = 1,
                              .token = 9,
                              .ttl_ms = 3000,
                              .expires_at_ms = INT64_MAX / 4,
                              .held = true,
                              .session_row = 4};
    rows[0].name_off = add_str(&b, "shard:1");
    rows[0].owner_off = add_str(&b, "w");
    rows[0].rid_off = rows[0].principal_off = SIZE_MAX;
    rows[1] = (struct tn_row){.row_id = 4,
                              .session = true,
                              .ttl_ms = 3000,
                              .expires_at_ms = 77,
                              .end = 2,
                              .ended_at_ms = 1234};
    rows[1].name_off = add_str(&b, "0123456789abcdef0123456789abcdef");
    rows[1].owner_off = add_str(&b, "fleet/7");
    rows[1].principal_off = add_str(&b, "indexer");
    rows[1].rid_off = SIZE_MAX;
    memset(rows[1].secret, 0xa5, TN_SECRET_BYTES);
    rows[2] = rows[1];
    rows[2].row_id = 5;
    rows[2].retired = true;
    struct tn_journal *j = jopen();
    tn_journal_begin(j, 1, 0);
    int64_t us;
    assert_int_equal(tn_journal_append(j, &b, 1000, &us), 0);
    tn_journal_close(j);
    j = jopen();
    struct tn_errmsg em = {{0}};
    uint64_t last = 0;
    assert_int_equal(tn_journal_replay(j, 0, check_sessions, &b, &last, &em),
                     0);
    assert_int_equal(last, 1);
    tn_journal_close(j);
    tn_buf_release(&b.strings);
}

/* Rewrite generation 1 of journal-1 in version 1 of the format ("TNJ1",
 * 72-byte rows without a session): what a server before sessions left. */
static void downgrade_to_v1(void)
{
    unsigned char *data, *out;
    size_t size, off = 0, at = 0;
    read_whole(1, &data, &size);
    out = calloc(1, size);
    assert_non_null(out);
    while (off + TN_JOURNAL_HEADER <= size && data[off + 8] == 'T') {
        const unsigned char *p = data + off + TN_JOURNAL_HEADER;
        uint32_t len =
            (uint32_t)data[off + 12] | (uint32_t)data[off + 13] << 8 |
            (uint32_t)data[off + 14] << 16 | (uint32_t)data[off + 15] << 24;
        uint32_t n = (uint32_t)p[16] | (uint32_t)p[17] << 8;
        uint32_t slen = len - 24 - n * 88, nlen = 24 + n * 72 + slen;
        unsigned char *h = out + at, *q = h + TN_JOURNAL_HEADER;
        memcpy(h, data + off, TN_JOURNAL_HEADER);
        h[11] = '1'; /* "TNJ1" */
        for (int k = 0; k < 4; k++)
            h[12 + k] = (unsigned char)(nlen >> (8 * k));
        memcpy(q, p, 24);
        for (uint32_t i = 0; i < n; i++)
            memcpy(q + 24 + i * 72, p + 24 + i * 88, 72);
        memcpy(q + 24 + n * 72, p + 24 + n * 88, slen);
        unsigned char sum[crypto_shorthash_BYTES];
        static const unsigned char key[crypto_shorthash_KEYBYTES] =
            "tenure-journal-1";
        crypto_shorthash(sum, h + 8, TN_JOURNAL_HEADER - 8 + nlen, key);
        memcpy(h, sum, 8);
        off += (TN_JOURNAL_HEADER + len + TN_JOURNAL_ALIGN - 1) /
               TN_JOURNAL_ALIGN * TN_JOURNAL_ALIGN;
        at += (TN_JOURNAL_HEADER + nlen + TN_JOURNAL_ALIGN - 1) /
              TN_JOURNAL_ALIGN * TN_JOURNAL_ALIGN;
    }
    write_whole(1, out, size);
    free(out);
    free(data);
}

/* A journal written before sessions (version 1) is still read: a server
 * killed before an upgrade leaves one for the next, newer one. */
static void test_reads_version_1(void **state)
{
    (void)state;
    struct tn_journal *j = jopen();
    tn_journal_begin(j, 1, 0);
    append(j, 1, 12);
    tn_journal_close(j);
    downgrade_to_v1();
    struct seen s;
    uint64_t last = 0;
    assert_int_equal(replay(0, 1, &s, &last), 0);
    assert_int_equal(s.n, 12);
    assert_int_equal(last, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damage_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reads_version_1, setup, teardown),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
