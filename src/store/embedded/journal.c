/* SPDX-License-Identifier: MIT */
/* The journal's files, appends and reads (journal.h); the layout of one
 * record is journal_rec.c's. */
#include "store/embedded/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/clock.h"
#include "store/embedded/journal_rec.h"

struct tn_journal {
    int fd[2];           /* journal-0, journal-1 */
    char path[2][4096];  /* for messages */
    uint64_t size[2];    /* bytes each file has (zero-filled or records) */
    uint64_t gen;        /* active generation; 0 before begin */
    uint64_t seq;        /* records written in it */
    uint64_t prev_count; /* records of gen - 1 */
    uint64_t off;        /* where the next record goes */
    unsigned char *wbuf; /* encoded record */
    size_t wcap;         /* its size */
    bool broken;         /* an fdatasync failed: no more appends */
};

int tn_journal_open(const char *dir, struct tn_journal **out,
                    struct tn_errmsg *em)
{
    *out = NULL;
    if (sodium_init() < 0)
        return TN_EINTERNAL;
    struct tn_journal *j = tn_calloc(1, sizeof(*j));
    if (j == NULL)
        return TN_ENOMEM;
    j->fd[0] = j->fd[1] = -1;
    for (int i = 0; i < 2; i++) {
        int n =
            snprintf(j->path[i], sizeof(j->path[i]), "%s/journal-%d", dir, i);
        struct stat st;
        if (n < 0 || (size_t)n >= sizeof(j->path[i]) ||
            (j->fd[i] = open(j->path[i], O_RDWR | O_CREAT | O_CLOEXEC, 0600)) <
                0 ||
            fstat(j->fd[i], &st) < 0) {
            tn_errmsg_set(em, "cannot open \"%s\": %s", j->path[i],
                          strerror(errno));
            tn_journal_close(j);
            return TN_EIO;
        }
        j->size[i] = (uint64_t)st.st_size;
    }
    /* A file just created must stay in the directory after a crash. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || fsync(dfd) < 0) {
        tn_errmsg_set(em, "cannot sync \"%s\": %s", dir, strerror(errno));
        if (dfd >= 0)
            (void)close(dfd);
        tn_journal_close(j);
        return TN_EIO;
    }
    (void)close(dfd);
    *out = j;
    return TN_OK;
}

void tn_journal_close(struct tn_journal *j)
{
    if (j == NULL)
        return;
    for (int i = 0; i < 2; i++)
        if (j->fd[i] >= 0)
            (void)close(j->fd[i]);
    tn_free(j->wbuf);
    tn_free(j);
}

/* ---- reading ---- */

struct file {
    unsigned char *data; /* the whole file */
    uint64_t size;
};

static int read_file(struct tn_journal *j, int i, struct file *f,
                     struct tn_errmsg *em)
{
    struct stat st;
    f->data = NULL;
    f->size = 0;
    if (fstat(j->fd[i], &st) < 0)
        goto fail;
    f->size = (uint64_t)st.st_size;
    if (f->size == 0)
        return TN_OK;
    f->data = tn_malloc(f->size);
    if (f->data == NULL)
        return TN_ENOMEM;
    for (uint64_t got = 0; got < f->size;) {
        ssize_t n = pread(j->fd[i], f->data + got, f->size - got, (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            goto fail;
        got += (uint64_t)n;
    }
    return TN_OK;
fail:
    tn_errmsg_set(em, "cannot read \"%s\": %s", j->path[i], strerror(errno));
    tn_free(f->data);
    f->data = NULL;
    return TN_EIO;
}

/* The record at off of f if its header and checksum hold. */
static bool record_at(const struct file *f, uint64_t off, struct tn_jrec_hdr *h)
{
    return tn_jrec_at(f->data, f->size, off, h);
}

/* What one file holds: its generation (0 when its first record is not
 * valid) and how many records of it are in order from offset 0. */
struct scan {
    uint64_t gen;
    uint64_t count;
    uint64_t prev_count;
};

/* Check the records of f from offset 0 and note what they are (out); then
 * refuse the file if a valid record newer than `after` lies past the end
 * of the walk (damage, not a torn tail: see journal.h). */
static int scan_file(const struct file *f, const char *path, uint64_t after,
                     struct scan *out, struct tn_errmsg *em)
{
    struct tn_jrec_hdr h;
    uint64_t off = 0;
    memset(out, 0, sizeof(*out));
    while (record_at(f, off, &h)) {
        if (out->count == 0) {
            out->gen = h.gen;
            out->prev_count = h.prev_count;
        } else if (h.gen != out->gen || h.seq != out->count + 1 ||
                   h.prev_count != out->prev_count)
            break;
        if (out->count == 0 && h.seq != 1)
            break;
        out->count++;
        off += tn_jrec_align(TN_JOURNAL_HEADER + (uint64_t)h.len);
    }
    if (out->count == 0)
        out->gen = 0;
    /* Past the walk: a torn append leaves nothing valid of a generation
     * newer than `after`; leftovers of older generations are expected. */
    for (uint64_t o = off; o + TN_JOURNAL_HEADER <= f->size;
         o += TN_JOURNAL_ALIGN) {
        if (record_at(f, o, &h) && h.gen > after &&
            !(h.gen == out->gen && h.seq <= out->count)) {
            tn_errmsg_set(em,
                          "journal \"%s\" is damaged: record %llu of "
                          "generation %llu at offset %llu follows a record "
                          "that does not check out",
                          path, (unsigned long long)h.seq,
                          (unsigned long long)h.gen, (unsigned long long)o);
            return TN_EIO;
        }
    }
    return TN_OK;
}

/* Hand the sc->count records scan_file checked to fn, decoded, as pass
 * `pass` (their headers are trusted now: the checksums held). */
static int deliver(const struct file *f, const char *path,
                   const struct scan *sc, unsigned pass, tn_journal_fn fn,
                   void *ctx, struct tn_errmsg *em)
{
    struct tn_jrec_rows rows = {0};
    uint64_t off = 0;
    int rc = TN_OK;
    for (uint64_t seq = 1; rc == 0 && seq <= sc->count; seq++) {
        struct tn_jrec_hdr h;
        tn_jrec_header(f->data + off, &h);
        uint32_t len = h.len;
        struct tn_batch b;
        struct tn_journal_rec rec = {
            .gen = sc->gen, .seq = seq, .pass = pass, .batch = &b};
        rc = tn_jrec_decode(f->data + off + TN_JOURNAL_HEADER, len, h.version,
                            &rows, &b, &rec.alive_at_ms);
        if (rc < 0)
            tn_errmsg_set(em,
                          "journal \"%s\": record %llu of generation %llu "
                          "does not decode",
                          path, (unsigned long long)seq,
                          (unsigned long long)sc->gen);
        else
            rc = fn(ctx, &rec);
        off += tn_jrec_align(TN_JOURNAL_HEADER + (uint64_t)len);
    }
    tn_free(rows.v);
    return rc;
}

static void free_files(struct file f[2])
{
    tn_free(f[0].data);
    tn_free(f[1].data);
}

int tn_journal_replay(struct tn_journal *j, uint64_t after, tn_journal_fn fn,
                      void *ctx, uint64_t *last_gen, struct tn_errmsg *em)
{
    struct file f[2] = {{0}};
    struct scan s[2];
    *last_gen = after;
    int rc = read_file(j, 0, &f[0], em);
    if (rc == 0)
        rc = read_file(j, 1, &f[1], em);
    /* Which generation each file holds, checked before any is applied. */
    for (int i = 0; rc == 0 && i < 2; i++)
        rc = scan_file(&f[i], j->path[i], after, &s[i], em);
    if (rc < 0) {
        free_files(f);
        return rc;
    }
    int first = s[0].gen <= s[1].gen ? 0 : 1; /* older one first */
    int order[2] = {first, 1 - first};
    uint64_t expect = after + 1, prev_count = 0;
    bool have_prev = false;
    for (int k = 0; rc == 0 && k < 2; k++) {
        const struct scan *sc = &s[order[k]];
        if (sc->gen <= after)
            continue;
        if (sc->gen != expect || (have_prev && sc->prev_count != prev_count)) {
            tn_errmsg_set(em,
                          "journal is damaged: generation %llu (%llu records"
                          ", %llu before it) does not follow generation "
                          "%llu (%llu records)",
                          (unsigned long long)sc->gen,
                          (unsigned long long)sc->count,
                          (unsigned long long)sc->prev_count,
                          (unsigned long long)(expect - 1),
                          (unsigned long long)prev_count);
            rc = TN_EIO;
            break;
        }
        rc = deliver(&f[order[k]], j->path[order[k]], sc, 0, fn, ctx, em);
        *last_gen = sc->gen;
        expect = sc->gen + 1;
        prev_count = sc->count;
        have_prev = true;
    }
    free_files(f);
    return rc;
}

int tn_journal_read_gen(struct tn_journal *j, uint64_t gen, unsigned passes,
                        tn_journal_fn fn, void *ctx, struct tn_errmsg *em)
{
    struct file f;
    int i = (int)(gen % 2);
    int rc = read_file(j, i, &f, em);
    struct scan s;
    if (rc == 0)
        rc = scan_file(&f, j->path[i], gen - 1, &s, em);
    if (rc == 0 && s.gen != gen) {
        tn_errmsg_set(em, "journal \"%s\" does not hold generation %llu",
                      j->path[i], (unsigned long long)gen);
        rc = TN_EIO;
    }
    for (unsigned p = 0; rc == 0 && p < passes; p++)
        rc = deliver(&f, j->path[i], &s, p, fn, ctx, em);
    tn_free(f.data);
    return rc;
}

/* ---- writing ---- */

void tn_journal_begin(struct tn_journal *j, uint64_t gen, uint64_t prev_count)
{
    TN_ASSERT(gen > 0);
    j->gen = gen;
    j->seq = 0;
    j->prev_count = prev_count;
    j->off = 0;
}

uint64_t tn_journal_seal(struct tn_journal *j)
{
    uint64_t sealed = j->gen;
    tn_journal_begin(j, sealed + 1, j->seq);
    return sealed;
}

uint64_t tn_journal_gen(const struct tn_journal *j)
{
    return j->gen;
}

bool tn_journal_failed(const struct tn_journal *j)
{
    return j->broken;
}

uint64_t tn_journal_bytes(const struct tn_journal *j)
{
    return j->off;
}

static int write_all(int fd, const unsigned char *p, uint64_t n, uint64_t off)
{
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno == ENOSPC || errno == EDQUOT ? TN_ENOSPC : TN_EIO;
        p += w;
        off += (uint64_t)w;
        n -= (uint64_t)w;
    }
    return TN_OK;
}

/* Make file i at least `need` bytes long with zeros, a chunk at a time.
 * The record's fdatasync then also makes the new size durable. */
static int grow(struct tn_journal *j, int i, uint64_t need)
{
    static const unsigned char zeros[64 * 1024];
    uint64_t to =
        (need + TN_JOURNAL_CHUNK - 1) / TN_JOURNAL_CHUNK * TN_JOURNAL_CHUNK;
    while (j->size[i] < to) {
        uint64_t n = to - j->size[i];
        if (n > sizeof(zeros))
            n = sizeof(zeros);
        int rc = write_all(j->fd[i], zeros, n, j->size[i]);
        if (rc < 0)
            return rc;
        j->size[i] += n;
    }
    return TN_OK;
}

int tn_journal_append(struct tn_journal *j, const struct tn_batch *b,
                      int64_t alive_at_ms, int64_t *sync_us)
{
    TN_ASSERT(j->gen > 0);
    *sync_us = 0;
    if (j->broken)
        return TN_EIO;
    struct tn_jrec_hdr h = {
        .gen = j->gen, .seq = j->seq + 1, .prev_count = j->prev_count};
    uint64_t total = tn_jrec_encode(&j->wbuf, &j->wcap, &h, b, alive_at_ms);
    if (total == 0)
        return TN_ENOMEM;
    int i = (int)(j->gen % 2);
    int rc = grow(j, i, j->off + total);
    if (rc == 0)
        rc = write_all(j->fd[i], j->wbuf, total, j->off);
    if (rc < 0)
        return rc; /* nothing synced; the next append overwrites it */
    int64_t t0 = tn_clock_mono_ns();
    if (fdatasync(j->fd[i]) < 0) {
        /* After a failed fdatasync the page cache may hold data the disk
         * does not: nothing written from here on can be trusted. */
        j->broken = true;
        return TN_EIO;
    }
    *sync_us = (tn_clock_mono_ns() - t0) / 1000;
    j->off += total;
    j->seq++;
    return TN_OK;
}
