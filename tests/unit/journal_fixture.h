/* SPDX-License-Identifier: MIT */
/* What the journal and disk tests share: record MAX_ROWS-row batches
 * numbered by make(), and a fresh temporary directory per case. */
#ifndef TN_TEST_JOURNAL_FIXTURE_H
#define TN_TEST_JOURNAL_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/embedded/journal.h"

#include <cmocka.h>

#define MAX_ROWS 8

/* A batch built by hand: rows whose fields derive from (rec, i). */
struct mk {
    struct tn_batch b;
    struct tn_row rows[MAX_ROWS];
};

static inline size_t add_str(struct tn_batch *b, const char *s)
{
    if (s == NULL)
        return SIZE_MAX;
    size_t off = b->strings.len;
    assert_int_equal(tn_buf_append(&b->strings, s, strlen(s) + 1), 0);
    return off;
}

/* Record number rec (1-based overall) has rec % MAX_ROWS rows (so some are
 * empty, like heartbeats); row i of it is lease rec * 100 + i. */
static inline void make(struct mk *m, uint64_t rec)
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

static inline void unmake(struct mk *m)
{
    tn_buf_release(&m->b.strings);
}

static inline void same_str(const struct tn_batch *a, size_t ao,
                            const struct tn_batch *b, size_t bo)
{
    const char *x = tn_batch_str(a, ao), *y = tn_batch_str(b, bo);
    if (x == NULL || y == NULL)
        assert_true(x == NULL && y == NULL);
    else
        assert_string_equal(x, y);
}

/* The records a replay handed over, checked against make(). */

static char dir[64];

static inline int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/tn-journal.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static inline int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

#endif
