/* SPDX-License-Identifier: MIT */
/* The journal, the SQLite file and the compaction between them (disk.h).
 *
 * Generations: the file holds every generation up to `compacted`.  The
 * committer appends to the journal's active generation; when that passes
 * journal_bytes and no sealed generation is waiting, it seals it and the
 * compaction thread applies it to the file in one transaction.  So the
 * journal holds at most two uncompacted generations, one per file, and
 * a file is reused only once the generation it held is in SQLite.
 *
 * `mu` guards the fields marked so; the SQLite connection belongs to the
 * compaction thread while `busy`, otherwise to whoever holds `mu`. */
#include "store/embedded/disk.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/log.h"
#include "store/embedded/journal.h"
#include "store/embedded/sqlite.h"

#define RETRY_MS 500
#define COMPACTOR_NICE 10

struct tn_disk {
    struct tn_sqlite_db *db; /* see above */
    struct tn_journal *j;    /* committer; the compactor reads sealed files */
    uint64_t journal_bytes;  /* sealing size */
    uint64_t last_token;     /* committer: highest token appended */
    pthread_t thread;        /* compaction */
    bool started;            /* thread runs */
    pthread_mutex_t mu;      /* guards what follows */
    pthread_cond_t cv;       /* busy, sealed or stopping changed */
    uint64_t compacted;      /* mu: newest generation in the file */
    uint64_t sealed;         /* mu: sealed, not yet in the file (0: none) */
    uint64_t active;         /* mu: the generation appends go to */
    bool busy;               /* mu: a compaction runs */
    bool stopping;           /* mu: close was called */
    uint64_t compactions;    /* mu: successful compactions */
    uint64_t failures;       /* mu: failed compactions */
    uint64_t rows;           /* mu: rows compacted */
    double seconds;          /* mu: time spent compacting */
};

/* Where the last image of each row of a generation is: row key (the row
 * id, with bit 32 set for a session's row: sessions number their rows on
 * their own) -> record number << 32 | index in the record.  Open
 * addressing; row ids are never 0, so neither are keys: 0 marks a free
 * slot. */
struct last_img {
    uint64_t *ids;
    uint64_t *at;
    size_t cap; /* a power of two, or 0 */
    size_t n;   /* ids stored */
};

/* Applying journal records to the open SQLite transaction. */
struct apply {
    struct tn_sqlite_db *db;
    struct last_img *last;  /* compaction: put last images only; else NULL */
    uint64_t last_token;    /* highest seen, starting from the file's */
    int64_t alive_at_ms;    /* latest seen, starting from the file's */
    uint64_t retired_floor; /* highest retirement floor seen, or 0 */
    uint64_t rows;          /* rows put */
};

static uint64_t row_key(const struct tn_row *r)
{
    return (r->session ? (uint64_t)1 << 32 : 0) | r->row_id;
}

static size_t last_find(const struct last_img *m, uint64_t id)
{
    size_t i =
        (size_t)((id ^ id >> 29) * 0x9e3779b97f4a7c15u >> 20) & (m->cap - 1);
    while (m->ids[i] != 0 && m->ids[i] != id)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int last_grow(struct last_img *m)
{
    struct last_img g = {.cap = m->cap ? m->cap * 2 : 1024, .n = m->n};
    g.ids = tn_calloc(g.cap, sizeof(*g.ids));
    g.at = tn_calloc(g.cap, sizeof(*g.at));
    if (g.ids == NULL || g.at == NULL) {
        tn_free(g.ids);
        tn_free(g.at);
        return TN_ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (m->ids[i] == 0)
            continue;
        size_t j = last_find(&g, m->ids[i]);
        g.ids[j] = m->ids[i];
        g.at[j] = m->at[i];
    }
    tn_free(m->ids);
    tn_free(m->at);
    *m = g;
    return TN_OK;
}

/* Compaction's first pass: note where each row's last image is. */
static int note_last(struct last_img *m, const struct tn_journal_rec *r)
{
    for (size_t i = 0; i < r->batch->n_rows; i++) {
        if ((m->n + 1) * 2 > m->cap && last_grow(m) < 0)
            return TN_ENOMEM;
        uint64_t id = row_key(&r->batch->rows[i]);
        size_t j = last_find(m, id);
        if (m->ids[j] == 0) {
            m->ids[j] = id;
            m->n++;
        }
        m->at[j] = r->seq << 32 | i;
    }
    return TN_OK;
}

/* Put a record's rows (with a last-image map, its last images only: the
 * others would be replaced inside the same transaction anyway) and fold
 * in its meta values.  Compaction runs a first pass to fill the map. */
static int apply_rec(void *ctx, const struct tn_journal_rec *r)
{
    struct apply *a = ctx;
    if (a->last != NULL && r->pass == 0)
        return note_last(a->last, r);
    if (r->batch->last_token > a->last_token)
        a->last_token = r->batch->last_token;
    if (r->alive_at_ms > a->alive_at_ms)
        a->alive_at_ms = r->alive_at_ms;
    int rc = TN_OK;
    for (size_t i = 0; i < r->batch->n_rows; i++) {
        /* Every retirement raises the floor, also one whose row a later
         * image replaces (the id was reused). */
        const struct tn_row *row = &r->batch->rows[i];
        if (row->retired && !row->session && row->token > a->retired_floor)
            a->retired_floor = row->token;
    }
    for (size_t i = 0; rc == 0 && i < r->batch->n_rows; i++) {
        if (a->last != NULL &&
            a->last->at[last_find(a->last, row_key(&r->batch->rows[i]))] !=
                (r->seq << 32 | i))
            continue;
        rc = tn_sqlite_db_put_row(a->db, r->batch, i);
        a->rows++;
    }
    return rc;
}

static int apply_begin(struct tn_disk *d, struct apply *a,
                       struct tn_sqlite_meta *m)
{
    memset(a, 0, sizeof(*a));
    a->db = d->db;
    int rc = tn_sqlite_db_meta(d->db, m);
    if (rc == 0)
        rc = tn_sqlite_db_begin(d->db);
    a->last_token = m->last_token;
    a->alive_at_ms = m->alive_at_ms;
    return rc;
}

/* Apply every generation the journal holds beyond the file, then start
 * the next generation.  mu held (or single-threaded), not busy. */
static int settle(struct tn_disk *d, struct tn_errmsg *em)
{
    struct apply a;
    struct tn_sqlite_meta m;
    int rc = apply_begin(d, &a, &m);
    uint64_t last = m.journal_gen;
    if (rc == 0)
        rc = tn_journal_replay(d->j, m.journal_gen, apply_rec, &a, &last, em);
    if (rc == 0 && last > m.journal_gen) {
        rc = tn_sqlite_db_commit(d->db, a.last_token, a.alive_at_ms, last,
                                 a.retired_floor);
        if (rc < 0)
            tn_errmsg_set(em, "cannot apply the journal to the file");
        else
            tn_log(TN_LOG_INFO, "store",
                   "\"journal applied\" generations=%llu-%llu rows=%llu",
                   (unsigned long long)(m.journal_gen + 1),
                   (unsigned long long)last, (unsigned long long)a.rows);
    } else {
        tn_sqlite_db_rollback(d->db);
    }
    if (rc < 0)
        return rc;
    d->compacted = last;
    d->sealed = 0;
    d->last_token = a.last_token;
    tn_journal_begin(d->j, last + 1, 0);
    d->active = last + 1;
    return TN_OK;
}

/* Compaction thread: apply sealed generation gen to the file, each row's
 * last image only. */
static int compact(struct tn_disk *d, uint64_t gen, uint64_t *rows)
{
    struct tn_errmsg em = {{0}};
    struct last_img last = {0};
    struct apply a;
    struct tn_sqlite_meta m;
    int rc = apply_begin(d, &a, &m);
    a.last = &last;
    if (rc == 0)
        rc = tn_journal_read_gen(d->j, gen, 2, apply_rec, &a, &em);
    tn_free(last.ids);
    tn_free(last.at);
    if (rc == 0)
        rc = tn_sqlite_db_commit(d->db, a.last_token, a.alive_at_ms, gen,
                                 a.retired_floor);
    else
        tn_sqlite_db_rollback(d->db);
    if (rc == 0)
        tn_sqlite_db_shrink(d->db);
    if (rc < 0)
        tn_log(TN_LOG_WARN, "store",
               "\"journal compaction failed, will retry\" generation=%llu "
               "err=\"%s\" detail=\"%s\"",
               (unsigned long long)gen, tn_strerror(rc), em.text);
    *rows = a.rows;
    return rc;
}

static void *compactor_main(void *arg)
{
    struct tn_disk *d = arg;
    /* Background work: on a busy machine the loop and the committer, whose
     * latency clients see, go first.  A compaction needs about a twentieth
     * of the CPU the requests that filled it took, well within a nice-10
     * thread's share of a saturated core.  (Linux nices threads.) */
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), COMPACTOR_NICE);
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->stopping && d->sealed == 0)
            pthread_cond_wait(&d->cv, &d->mu);
        if (d->stopping)
            break;
        uint64_t gen = d->sealed, rows = 0;
        d->busy = true;
        pthread_mutex_unlock(&d->mu);
        int64_t t0 = tn_clock_mono_ns();
        int rc = compact(d, gen, &rows);
        double secs = (double)(tn_clock_mono_ns() - t0) / 1e9;
        pthread_mutex_lock(&d->mu);
        d->busy = false;
        d->seconds += secs;
        if (rc == 0) {
            d->compactions++;
            d->rows += rows;
            if (gen > d->compacted)
                d->compacted = gen;
            if (d->sealed == gen)
                d->sealed = 0;
        } else {
            d->failures++;
        }
        pthread_cond_broadcast(&d->cv);
        if (rc < 0 && !d->stopping) {
            struct timespec ts = tn_clock_mono_deadline(RETRY_MS);
            (void)pthread_cond_timedwait(&d->cv, &d->mu, &ts);
        }
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* Take mu once no compaction runs. */
static void lock_idle(struct tn_disk *d)
{
    pthread_mutex_lock(&d->mu);
    while (d->busy)
        pthread_cond_wait(&d->cv, &d->mu);
}

int tn_disk_open(const char *dir, uint64_t journal_bytes, struct tn_disk **out,
                 struct tn_errmsg *em)
{
    *out = NULL;
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s/tenure.db", dir);
    if (n < 0 || (size_t)n >= sizeof(path)) {
        tn_errmsg_set(em, "data dir path too long");
        return TN_EINVAL;
    }
    struct tn_disk *d = tn_calloc(1, sizeof(*d));
    if (d == NULL)
        return TN_ENOMEM;
    d->journal_bytes =
        journal_bytes > 0 ? journal_bytes : TN_DISK_JOURNAL_BYTES;
    if (tn_clock_cond_init(&d->cv) < 0) {
        tn_free(d);
        return TN_ENOMEM;
    }
    pthread_mutex_init(&d->mu, NULL);
    int rc = tn_sqlite_db_open(path, &d->db, em);
    if (rc == 0)
        rc = tn_journal_open(dir, &d->j, em);
    if (rc == 0)
        rc = settle(d, em);
    if (rc == 0 && pthread_create(&d->thread, NULL, compactor_main, d) != 0)
        rc = TN_ENOMEM;
    if (rc < 0) {
        tn_disk_close(d);
        return rc;
    }
    d->started = true;
    *out = d;
    return TN_OK;
}

void tn_disk_close(struct tn_disk *d)
{
    if (d == NULL)
        return;
    if (d->started) {
        pthread_mutex_lock(&d->mu);
        d->stopping = true;
        pthread_cond_broadcast(&d->cv);
        pthread_mutex_unlock(&d->mu);
        pthread_join(d->thread, NULL);
        /* A clean stop leaves the whole state in tenure.db (for backups
         * and tools that read it); if that fails the journal keeps it. */
        struct tn_errmsg em = {{0}};
        if (!tn_journal_failed(d->j) && settle(d, &em) < 0)
            tn_log(TN_LOG_WARN, "store",
                   "\"journal left for the next start\" detail=\"%s\"",
                   em.text);
    }
    tn_journal_close(d->j);
    tn_sqlite_db_close(d->db);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    tn_free(d);
}

int tn_disk_load(struct tn_disk *d, struct tn_lease_table *t, int64_t now_ms,
                 bool exact, struct tn_errmsg *em)
{
    return tn_disk_load_hooked(d, t, now_ms, exact, NULL, em);
}

int tn_disk_load_hooked(struct tn_disk *d, struct tn_lease_table *t,
                        int64_t now_ms, bool exact,
                        const struct tn_sqlite_load_hook *hook,
                        struct tn_errmsg *em)
{
    lock_idle(d);
    int rc = tn_sqlite_db_load(d->db, t, now_ms, exact, hook, em);
    pthread_mutex_unlock(&d->mu);
    return rc;
}

int tn_disk_write(struct tn_disk *d, struct tn_batch *b)
{
    int rc = tn_journal_append(d->j, b, tn_clock_now_ms(), &b->sync_us);
    if (rc < 0)
        return rc;
    if (b->last_token > d->last_token)
        d->last_token = b->last_token;
    if (tn_journal_bytes(d->j) >= d->journal_bytes) {
        pthread_mutex_lock(&d->mu);
        /* The other file is free once the generation it held is in the
         * file; until then this generation just grows. */
        if (d->sealed == 0) {
            d->sealed = tn_journal_seal(d->j);
            d->active = d->sealed + 1;
            pthread_cond_broadcast(&d->cv);
        }
        pthread_mutex_unlock(&d->mu);
    }
    return TN_OK;
}

int tn_disk_probe(struct tn_disk *d)
{
    struct tn_batch b;
    memset(&b, 0, sizeof(b));
    b.last_token = d->last_token;
    return tn_disk_write(d, &b);
}

int tn_disk_recover(struct tn_disk *d)
{
    struct tn_errmsg em = {{0}};
    lock_idle(d);
    int rc = settle(d, &em);
    pthread_mutex_unlock(&d->mu);
    /* The file is complete; prove that the journal takes writes too. */
    return rc < 0 ? rc : tn_disk_probe(d);
}

void tn_disk_metrics(struct tn_disk *d, struct tn_buf *out)
{
    pthread_mutex_lock(&d->mu);
    uint64_t ok = d->compactions, failed = d->failures, rows = d->rows;
    uint64_t gen = d->compacted, active = d->active;
    double secs = d->seconds;
    pthread_mutex_unlock(&d->mu);
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_journal_compactions_total counter\n"
        "tenure_journal_compactions_total{result=\"ok\"} %llu\n"
        "tenure_journal_compactions_total{result=\"failed\"} %llu\n"
        "# TYPE tenure_journal_compacted_rows_total counter\n"
        "tenure_journal_compacted_rows_total %llu\n"
        "# TYPE tenure_journal_compaction_seconds_total counter\n"
        "tenure_journal_compaction_seconds_total %.6f\n"
        "# TYPE tenure_journal_compacted_generation gauge\n"
        "tenure_journal_compacted_generation %llu\n"
        "# TYPE tenure_journal_generation gauge\n"
        "tenure_journal_generation %llu\n",
        (unsigned long long)ok, (unsigned long long)failed,
        (unsigned long long)rows, secs, (unsigned long long)gen,
        (unsigned long long)active);
}
