/* SPDX-License-Identifier: MIT */
/* The publisher's event log on disk: the writer on the loop thread (one
 * write(2) per event, never an fsync, so grants never wait), recovery of
 * the log's end at start (a torn tail is cut), and the flusher thread
 * (fdatasync every SYNC_MS, roll-over, pruning of files every target has
 * sent).  See internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "common/log.h"
#include "internal.h"

void tn_pub_wake_targets(struct tn_publish *p)
{
    if (atomic_load(&p->waiting) == 0)
        return;
    (void)pthread_mutex_lock(&p->mu);
    (void)pthread_cond_broadcast(&p->cv);
    (void)pthread_mutex_unlock(&p->mu);
}

/* ---- the writer (loop thread) ---- */

static int open_segment(struct tn_publish *p, uint64_t first, bool create)
{
    char path[1200];
    tn_pub_log_path(p->dir, first, path, sizeof(path));
    int fd = open(
        path, O_WRONLY | O_APPEND | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
    if (fd < 0)
        return TN_EIO;
    struct stat st;
    p->seg_bytes = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
    (void)pthread_mutex_lock(&p->mu);
    if (p->fd >= 0) {
        if (p->retired_fd >= 0)
            (void)close(p->retired_fd);
        p->retired_fd = p->fd;
    }
    p->fd = fd;
    (void)pthread_mutex_unlock(&p->mu);
    return TN_OK;
}

/* Append r (its id is p->next_id); false if the write failed, which
 * leaves the file as it was. */
static bool append(struct tn_publish *p, struct tn_pub_record *r)
{
    if (p->fd < 0)
        return false;
    if (p->seg_records >= p->segment_events) {
        if (open_segment(p, p->next_id, true) < 0)
            return false;
        p->seg_records = 0;
    }
    char line[TN_PUB_RECORD_MAX];
    r->id = p->next_id;
    size_t len = tn_pub_log_format(r, line);
    ssize_t w;
    do
        w = write(p->fd, line, len);
    while (w < 0 && errno == EINTR);
    if (w != (ssize_t)len) {
        if (w > 0 && ftruncate(p->fd, (off_t)p->seg_bytes) < 0) {
            /* A torn record would stop every reader; the next start
             * truncates it, until then nothing more is written. */
            (void)close(p->fd);
            p->fd = -1;
        }
        atomic_fetch_add(&p->write_failures, 1);
        return false;
    }
    p->seg_bytes += len;
    p->seg_records++;
    p->next_id++;
    atomic_store(&p->head, r->id);
    return true;
}

void tn_publish_event(void *arg, const struct tn_event *ev)
{
    struct tn_publish *p = arg;
    if (p == NULL)
        return;
    int64_t now = tn_clock_wall_ms();
    if (p->lost) {
        struct tn_pub_record reset = {.type = TN_EVENT_RESET, .at_ms = now};
        if (!append(p, &reset))
            return;
        p->lost = false;
    }
    struct tn_pub_record r = {
        .type = ev->type, .token = ev->token, .floor = ev->floor, .at_ms = now};
    if (ev->type != TN_EVENT_RESET) {
        memcpy(r.name, ev->name, sizeof(r.name));
        memcpy(r.owner_id, ev->owner_id, sizeof(r.owner_id));
        memcpy(r.session_id, ev->session_id, sizeof(r.session_id));
        r.name[TN_NAME_MAX_BYTES] = '\0';
        r.owner_id[TN_OWNER_MAX_BYTES] = '\0';
        r.session_id[TN_SESSION_ID_HEX] = '\0';
        r.end = ev->end;
    }
    if (!append(p, &r))
        p->lost = true;
    tn_pub_wake_targets(p);
}

/* ---- start-up: find the log's end ---- */

/* Scan the last file: its last whole record sets next_id; a torn tail is
 * cut off. */
static int recover_tail(struct tn_publish *p, uint64_t first)
{
    char path[1200];
    tn_pub_log_path(p->dir, first, path, sizeof(path));
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return TN_EIO;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        (void)close(fd);
        return TN_EIO;
    }
    size_t size = (size_t)st.st_size;
    char *buf = tn_malloc(size + 1);
    if (buf == NULL) {
        (void)close(fd);
        return TN_ENOMEM;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t n = pread(fd, buf + got, size - got, (off_t)got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    size_t good = 0;
    uint64_t records = 0, last = first - 1;
    struct tn_pub_record r;
    long used;
    while ((used = tn_pub_log_parse(buf + good, buf + got, &r)) > 0 &&
           r.id == last + 1) {
        good += (size_t)used;
        last = r.id;
        records++;
    }
    tn_free(buf);
    if (good < size) {
        tn_log(TN_LOG_WARN, "publish",
               "\"event log had a torn tail, cut\" file=\"%s\" bytes=%zu", path,
               size - good);
        if (ftruncate(fd, (off_t)good) < 0) {
            (void)close(fd);
            return TN_EIO;
        }
    }
    (void)close(fd);
    p->next_id = last + 1;
    p->seg_records = records;
    return TN_OK;
}

int tn_pub_open_log(struct tn_publish *p, bool *was_clean)
{
    if (mkdir(p->dir, 0700) < 0 && errno != EEXIST)
        return TN_EIO;
    char lock[1200];
    (void)snprintf(lock, sizeof(lock), "%s/LOCK", p->dir);
    p->lockfd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (p->lockfd < 0 || flock(p->lockfd, LOCK_EX | LOCK_NB) < 0)
        return TN_EBUSY; /* another tenured logs here */
    char clean[1200];
    (void)snprintf(clean, sizeof(clean), "%s/clean", p->dir);
    *was_clean = access(clean, F_OK) == 0;
    uint64_t *firsts = NULL;
    size_t n = 0;
    int rc = tn_pub_log_list(p->dir, &firsts, &n);
    if (rc < 0)
        return rc;
    uint64_t first = n > 0 ? firsts[n - 1] : 1;
    atomic_store(&p->first_id, n > 0 ? firsts[0] : 1);
    tn_free(firsts);
    if (n == 0) {
        p->next_id = 1;
        p->seg_records = 0;
        *was_clean = true; /* nothing was ever logged */
    } else if ((rc = recover_tail(p, first)) < 0) {
        return rc;
    }
    atomic_store(&p->head, p->next_id - 1);
    rc = open_segment(p, first, true);
    if (rc == 0 && unlink(clean) < 0 && errno != ENOENT)
        rc = TN_EIO;
    return rc;
}

/* ---- the flusher: durability against power loss, retention ---- */

static uint64_t min_cursor(struct tn_publish *p)
{
    uint64_t m = UINT64_MAX;
    for (size_t i = 0; i < p->n_targets; i++) {
        uint64_t c = atomic_load(&p->targets[i].cursor);
        if (c < m)
            m = c;
    }
    return m;
}

/* Delete files every id of which every target has acknowledged (or
 * skipped with a reset); never the newest. */
static void prune(struct tn_publish *p)
{
    uint64_t *firsts = NULL;
    size_t n = 0;
    if (tn_pub_log_list(p->dir, &firsts, &n) < 0 || n == 0)
        return;
    uint64_t done = min_cursor(p);
    size_t i = 0;
    for (; i + 1 < n && firsts[i + 1] <= done + 1; i++) {
        char path[1200];
        tn_pub_log_path(p->dir, firsts[i], path, sizeof(path));
        (void)unlink(path);
    }
    atomic_store(&p->first_id, firsts[i]);
    tn_free(firsts);
}

void *tn_pub_flusher_main(void *arg)
{
    struct tn_publish *p = arg;
    uint64_t synced = atomic_load(&p->head);
    int64_t next_prune = 0;
    while (!atomic_load(&p->stopping)) {
        struct timespec ts = {0, SYNC_MS * 1000000L};
        (void)nanosleep(&ts, NULL);
        (void)pthread_mutex_lock(&p->mu);
        int old = p->retired_fd;
        p->retired_fd = -1;
        int fd = p->fd >= 0 ? dup(p->fd) : -1;
        (void)pthread_mutex_unlock(&p->mu);
        if (old >= 0) {
            (void)fdatasync(old);
            (void)close(old);
        }
        uint64_t head = atomic_load(&p->head);
        if (fd >= 0 && head != synced) {
            (void)fdatasync(fd);
            synced = head;
        }
        if (fd >= 0)
            (void)close(fd);
        if (p->pg)
            tn_pub_leader_tick(&p->lead, atomic_load(&p->head));
        int64_t now = tn_clock_mono_ms();
        if (now >= next_prune) {
            prune(p);
            next_prune = now + 1000;
        }
    }
    return NULL;
}
