/* SPDX-License-Identifier: MIT */
/* The token floor (docs/HA.md): defence in depth against a database that
 * forgets commits it had confirmed.  Tokens must never be issued twice,
 * and the database's sequence is their only source; should a failover,
 * a restored backup or a cluster manager's mistake roll it back, the
 * tokens issued since would be issued again.  So each instance keeps, in
 * its data dir, a bound above every token it has acknowledged (or heard
 * of in events), and after every (re)connection lifts the sequence to it
 * under the same lock as the stored-token lift (FLOOR_SQL in sql.c).
 *
 * Cost: like a sequence cache, the file holds a reservation, written
 * (fsynced) only when a token passes it, as a block ahead; the answers
 * that need a new block wait for that one write, all others wait for
 * nothing.  The block is about two seconds of the sequence's growth as
 * last measured (at least BLOCK_MIN, at most BLOCK_MAX tokens), so a busy
 * instance writes about once every two seconds; the growth is measured
 * from the last reservation or raise, so that a raise, which lifts the
 * sequence by up to a block at once, does not count as growth.  The
 * tokens of a reservation not used before a restart are skipped (the
 * sequence is lifted to the reservation), which leaves gaps, never
 * duplicates.  The file is replaced whole (write, fdatasync, rename,
 * fsync of the directory) and only ever grows: instances sharing a data
 * dir merge their reservations under a lock.  Loop thread only. */
#include "store/pg/floor.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/log.h"
#include "store/pg/pg.h"

#define FILE_NAME "pg-token-floor"
#define BLOCK_MIN 1000u
#define BLOCK_MAX (1u << 20)
/* A block lasts about this long at the measured growth. */
#define BLOCK_MS 2000
/* "tenure-token-floor 1 acked=N reserved=N\n" */
#define FORMAT "tenure-token-floor 1 acked=%" PRIu64 " reserved=%" PRIu64 "\n"

/* Read DIR/pg-token-floor into *acked and *reserved (0, 0 when there is
 * none).  0, or TN_EINVAL / TN_EIO with em. */
static int read_file(const char *path, uint64_t *acked, uint64_t *reserved,
                     struct tn_errmsg *em)
{
    *acked = 0;
    *reserved = 0;
    FILE *fp = fopen(path, "r");
    if (fp == NULL && errno == ENOENT)
        return TN_OK;
    if (fp == NULL) {
        tn_errmsg_set(em, "cannot read the token floor %s: %s", path,
                      strerror(errno));
        return TN_EIO;
    }
    char line[128] = "";
    char extra = 0;
    bool got = fgets(line, sizeof(line), fp) != NULL;
    (void)fclose(fp);
    if (!got ||
        sscanf(line,
               "tenure-token-floor 1 acked=%" SCNu64 " reserved=%" SCNu64 "%c",
               acked, reserved, &extra) != 3 ||
        extra != '\n' || *acked > *reserved) {
        tn_errmsg_set(em,
                      "the token floor %s is not readable; if this "
                      "database never lost a commit, remove it",
                      path);
        return TN_EINVAL;
    }
    return TN_OK;
}

int tn_pg_floor_open(struct tn_pg_floor *f, const char *data_dir,
                     struct tn_errmsg *em)
{
    memset(f, 0, sizeof(*f));
    f->lockfd = -1;
    f->block = BLOCK_MIN;
    if (data_dir == NULL || data_dir[0] == '\0')
        return TN_OK;
    if (mkdir(data_dir, 0700) < 0 && errno != EEXIST) {
        tn_errmsg_set(em, "cannot create %s: %s", data_dir, strerror(errno));
        return TN_EIO;
    }
    f->dir = tn_strdup(data_dir);
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    int rc = f->dir != NULL ? tn_buf_printf(&b, "%s/" FILE_NAME, data_dir)
                            : TN_ENOMEM;
    f->path = rc == 0 ? tn_strdup(b.data) : NULL;
    rc = rc == 0 && f->path == NULL ? TN_ENOMEM : rc;
    if (rc == 0)
        rc = tn_buf_printf(&b, ".lock");
    if (rc == 0) {
        f->lockfd = open(b.data, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (f->lockfd < 0) {
            tn_errmsg_set(em, "cannot open %s: %s", b.data, strerror(errno));
            rc = TN_EIO;
        }
    }
    tn_buf_release(&b);
    if (rc == 0)
        rc = read_file(f->path, &f->start_acked, &f->start_reserved, em);
    if (rc < 0) {
        tn_pg_floor_close(f);
        return rc;
    }
    f->reserved = f->start_reserved;
    if (f->start_reserved > 0)
        tn_log(TN_LOG_INFO, "store",
               "\"postgresql token floor read\" path=\"%s\" acked=%" PRIu64
               " reserved=%" PRIu64,
               f->path, f->start_acked, f->start_reserved);
    return TN_OK;
}

void tn_pg_floor_close(struct tn_pg_floor *f)
{
    if (f->lockfd >= 0)
        (void)close(f->lockfd);
    tn_free(f->path);
    tn_free(f->dir);
    memset(f, 0, sizeof(*f));
    f->lockfd = -1;
}

/* Write "acked, reserved" as the whole file, durably. */
static int write_file(const struct tn_pg_floor *f, uint64_t acked,
                      uint64_t reserved)
{
    char tmp[4200];
    char text[128];
    int n = snprintf(text, sizeof(text), FORMAT, acked, reserved);
    (void)snprintf(tmp, sizeof(tmp), "%s.tmp", f->path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return TN_EIO;
    bool ok = write(fd, text, (size_t)n) == n && fdatasync(fd) == 0;
    ok = close(fd) == 0 && ok;
    ok = ok && rename(tmp, f->path) == 0;
    int dfd = ok ? open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    ok = dfd >= 0 && fsync(dfd) == 0;
    if (dfd >= 0)
        (void)close(dfd);
    return ok ? TN_OK : TN_EIO;
}

/* About BLOCK_MS of the sequence's growth since the last reservation or
 * raise (base, base_ms). */
static uint64_t next_block(const struct tn_pg_floor *f, uint64_t token,
                           int64_t now)
{
    if (f->base_ms == 0 || token <= f->base)
        return BLOCK_MIN;
    int64_t ms = now - f->base_ms > 0 ? now - f->base_ms : 1;
    uint64_t grown = token - f->base;
    uint64_t want = grown > UINT64_MAX / BLOCK_MS
                        ? BLOCK_MAX
                        : grown * BLOCK_MS / (uint64_t)ms;
    return want < BLOCK_MIN ? BLOCK_MIN : want > BLOCK_MAX ? BLOCK_MAX : want;
}

/* A new reservation above token, merged with what another instance
 * sharing the directory may have written meanwhile. */
static int reserve(struct tn_pg_floor *f, uint64_t token)
{
    int64_t now = tn_clock_now_ms();
    f->block = next_block(f, token, now);
    if (flock(f->lockfd, LOCK_EX) < 0)
        return TN_EIO;
    uint64_t acked = 0;
    uint64_t reserved = 0;
    struct tn_errmsg em = {{0}};
    int rc = read_file(f->path, &acked, &reserved, &em);
    if (rc == 0) {
        uint64_t top = token > reserved ? token : reserved;
        acked = f->acked > acked ? f->acked : acked;
        rc = write_file(f, acked, top + f->block);
        if (rc == 0)
            f->reserved = top + f->block;
    }
    (void)flock(f->lockfd, LOCK_UN);
    f->base = token;
    f->base_ms = now;
    f->n_writes++;
    if (rc < 0 && !f->failing)
        tn_log(TN_LOG_ERROR, "store",
               "\"cannot write the token floor; answering 503\" path=\"%s\"",
               f->path);
    f->failing = rc < 0;
    return rc;
}

int tn_pg_floor_cover(struct tn_pg_floor *f, uint64_t token)
{
    if (f->lockfd < 0)
        return TN_OK;
    if (token > f->acked)
        f->acked = token;
    return token > f->reserved ? reserve(f, token) : TN_OK;
}

int tn_pg_floor_cover_result(struct tn_pg_floor *f,
                             const struct tn_store_result *r)
{
    uint64_t top = r->rc == TN_OK ? r->lease.token : 0;
    for (size_t i = 0; i < r->n_claims; i++) {
        if (r->claims[i].token > top)
            top = r->claims[i].token;
    }
    return top > 0 ? tn_pg_floor_cover(f, top) : TN_OK;
}

/* The reservation, not the highest token acknowledged: it also covers
 * tokens other instances acknowledged that this one has not heard of yet
 * (their events were in flight), which is what the block's margin is
 * for.  A reconnection without a rollback finds the sequence below it
 * and skips the rest of the block: a gap, never a duplicate. */
bool tn_pg_floor_guard(struct tn_pg_floor *f, struct tn_store_result *out)
{
    if (tn_pg_floor_cover_result(f, out) == 0)
        return false;
    tn_store_result_release(out);
    memset(out, 0, sizeof(*out));
    out->rc = TN_EUNAVAIL;
    out->retry_after_ms = TN_PG_RETRY_AFTER_MS;
    return true;
}

uint64_t tn_pg_floor_value(const struct tn_pg_floor *f)
{
    return f->acked > f->reserved ? f->acked : f->reserved;
}

void tn_pg_floor_seen(struct tn_pg_floor *f, uint64_t top, bool raised)
{
    uint64_t confirmed = f->acked > f->start_acked ? f->acked : f->start_acked;
    uint64_t floor = tn_pg_floor_value(f);
    if (top < confirmed) {
        f->n_alarms++;
        f->last_forgotten = confirmed - top;
        tn_log(TN_LOG_ERROR, "store",
               "\"the database has forgotten tokens it had committed; the "
               "sequence is raised above them\" sequence=%" PRIu64
               " confirmed=%" PRIu64 " raised_to=%" PRIu64,
               top, confirmed, floor);
    } else if (raised) {
        tn_log(TN_LOG_INFO, "store",
               "\"token sequence raised to this instance's reservation\" "
               "sequence=%" PRIu64 " raised_to=%" PRIu64,
               top, floor);
    }
    if (raised) {
        f->n_raises++;
        f->base = floor;
        f->base_ms = tn_clock_now_ms();
    }
}

void tn_pg_floor_metrics(const struct tn_pg_floor *f, struct tn_buf *out)
{
    (void)tn_buf_printf(
        out,
        "# TYPE tenure_pg_token_floor gauge\ntenure_pg_token_floor %" PRIu64
        "\n# TYPE tenure_pg_token_floor_writes_total counter\n"
        "tenure_pg_token_floor_writes_total %" PRIu64 "\n"
        "# TYPE tenure_pg_token_floor_raises_total counter\n"
        "tenure_pg_token_floor_raises_total %" PRIu64 "\n"
        "# TYPE tenure_pg_tokens_forgotten gauge\n"
        "tenure_pg_tokens_forgotten %" PRIu64 "\n"
        "# TYPE tenure_pg_token_floor_alarms_total counter\n"
        "tenure_pg_token_floor_alarms_total %" PRIu64 "\n",
        tn_pg_floor_value(f), f->n_writes, f->n_raises, f->last_forgotten,
        f->n_alarms);
}
