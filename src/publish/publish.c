/* SPDX-License-Identifier: MIT */
/* The publisher (publish.h): the log writer on the loop thread, a flusher
 * thread (fdatasync, retention), and one thread per target that sends
 * the log from its cursor.  A target's cursor is the last id it
 * acknowledged, saved atomically in dir/cursor-<label>; sending after it
 * again after a crash is what makes delivery at least once.  Shared
 * state between threads is atomics plus one mutex for the file handover
 * and the wake-up of idle targets. */
#include "publish.h"

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
#include "leader.h"
#include "log.h"
#define SEGMENT_EVENTS 100000
#define BATCH_MAX 512
#define SYNC_MS 100
#define CURSOR_SAVE_MS 50
#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 2000

static const struct tn_pub_target_ops *const target_kinds[] = {
    &tn_pub_redis_ops, &tn_pub_rediss_ops, &tn_pub_kafka_ops};

struct target {
    struct tn_publish *p;                /* owner */
    const struct tn_pub_target_ops *ops; /* kind */
    void *impl;                          /* its state */
    char label[160];                     /* metrics label, file suffix */
    char cursor_path[1300];              /* dir/cursor-<label> */
    pthread_t thread;                    /* sender */
    bool started;                        /* thread runs */
    _Atomic uint64_t cursor;             /* last id acknowledged */
    _Atomic uint64_t published;          /* records acknowledged */
    _Atomic uint64_t resets;             /* resets decided */
    _Atomic int64_t oldest_ms;           /* at_ms of the oldest unsent, 0 */
    _Atomic bool up;                     /* the last send worked */
    bool reset_pending;                  /* a reset must go first */
    uint64_t reset_id;                   /* the last id it covers */
    uint64_t saved;                      /* cursor in the file */
    struct tn_pub_reader rd;             /* reads the log */
    struct tn_pub_record *batch;         /* BATCH_MAX records */
    struct tn_pub_record *mapped;        /* PostgreSQL: batch, ids mapped */
    uint64_t term;                       /* PostgreSQL: publisher term */
    uint64_t offset;                     /* PostgreSQL: log id -> sent id */
    uint64_t reserved;                   /* PostgreSQL: ids reserved */
};

struct tn_publish {
    char dir[1100];                  /* the log's directory */
    uint64_t backlog;                /* lag that triggers a reset */
    uint64_t segment_events;         /* records per file */
    int fd;                          /* current file (loop thread writes) */
    uint64_t seg_records;            /* records in it */
    uint64_t seg_bytes;              /* bytes in it */
    uint64_t next_id;                /* loop thread */
    bool lost;                       /* a write failed: next is a reset */
    _Atomic uint64_t head;           /* last id in the log */
    _Atomic uint64_t first_id;       /* first id the log holds */
    _Atomic uint64_t write_failures; /* failed appends */
    _Atomic int waiting;             /* target threads asleep */
    _Atomic bool stopping;           /* threads end */
    _Atomic int64_t drain_until_ms;  /* targets may finish until then */
    pthread_mutex_t mu;              /* fd handover, cv */
    pthread_cond_t cv;               /* head moved or stopping */
    int retired_fd;                  /* rolled-over file to sync and close */
    pthread_t flusher;               /* syncs and prunes */
    bool flusher_started;            /* thread runs */
    struct target targets[TN_PUBLISH_MAX_TARGETS];
    size_t n_targets;          /* count */
    bool pg;                   /* one publisher per PostgreSQL cluster */
    struct tn_pub_leader lead; /* when pg */
    int lockfd;                /* flock on dir/LOCK */
};

/* ---- shared helpers ---- */

const char *tn_pub_type_name(enum tn_event_type t)
{
    static const char *const names[] = {"acquired", "released", "expired",
                                        "revoked", "reset"};
    return (unsigned)t < 5 ? names[t] : "reset";
}

void tn_pub_json_str(struct tn_buf *b, const char *s)
{
    (void)tn_buf_append(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            char e[2] = {'\\', (char)*c};
            (void)tn_buf_append(b, e, 2);
        } else if (*c < 0x20) {
            (void)tn_buf_printf(b, "\\u%04x", *c);
        } else {
            (void)tn_buf_append(b, c, 1);
        }
    }
    (void)tn_buf_append(b, "\"", 1);
}

void tn_pub_json_record(struct tn_buf *b, const struct tn_pub_record *r)
{
    (void)tn_buf_printf(b, "{\"id\":%llu,\"type\":\"%s\",\"name\":",
                        (unsigned long long)r->id, tn_pub_type_name(r->type));
    tn_pub_json_str(b, r->name);
    (void)tn_buf_append(b, ",\"owner_id\":", 12);
    tn_pub_json_str(b, r->owner_id);
    (void)tn_buf_printf(b, ",\"token\":%llu,\"floor\":%llu,\"at_ms\":%lld}",
                        (unsigned long long)r->token,
                        (unsigned long long)r->floor, (long long)r->at_ms);
}

static void wake_targets(struct tn_publish *p)
{
    if (atomic_load(&p->waiting) == 0)
        return;
    (void)pthread_mutex_lock(&p->mu);
    (void)pthread_cond_broadcast(&p->cv);
    (void)pthread_mutex_unlock(&p->mu);
}

/* Sleep until the head passes after, stop, or ms pass. */
static void wait_for(struct tn_publish *p, uint64_t after, int64_t ms)
{
    struct timespec ts = tn_clock_mono_deadline(ms);
    (void)pthread_mutex_lock(&p->mu);
    atomic_fetch_add(&p->waiting, 1);
    if (atomic_load(&p->head) <= after && !atomic_load(&p->stopping))
        (void)pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    atomic_fetch_sub(&p->waiting, 1);
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
        r.name[TN_NAME_MAX_BYTES] = '\0';
        r.owner_id[TN_OWNER_MAX_BYTES] = '\0';
    }
    if (!append(p, &r))
        p->lost = true;
    wake_targets(p);
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

static int open_log(struct tn_publish *p, bool *was_clean)
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

static void *flusher_main(void *arg)
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

/* ---- cursors ---- */

static int save_cursor(struct target *t, uint64_t c)
{
    char tmp[1320];
    (void)snprintf(tmp, sizeof(tmp), "%s.tmp", t->cursor_path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return TN_EIO;
    char line[32];
    int n = snprintf(line, sizeof(line), "%llu\n", (unsigned long long)c);
    bool ok = write(fd, line, (size_t)n) == n && fdatasync(fd) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, t->cursor_path) < 0)
        return TN_EIO;
    t->saved = c;
    return TN_OK;
}

/* The saved cursor, or none: then the target starts at the log's end,
 * like a new SSE subscriber (it was never promised older events). */
static uint64_t load_cursor(struct target *t, uint64_t head)
{
    FILE *f = fopen(t->cursor_path, "re");
    if (f == NULL)
        return head;
    unsigned long long c = head;
    if (fscanf(f, "%llu", &c) != 1)
        c = head;
    (void)fclose(f);
    return c;
}

/* ---- the target threads ---- */

static void sleep_ms(struct tn_publish *p, int64_t ms)
{
    wait_for(p, UINT64_MAX, ms);
}

static bool should_stop(struct target *t)
{
    struct tn_publish *p = t->p;
    if (!atomic_load(&p->stopping))
        return false;
    return atomic_load(&t->cursor) >= atomic_load(&p->head) ||
           tn_clock_mono_ms() >= atomic_load(&p->drain_until_ms);
}

static void decide_reset(struct target *t, uint64_t head, const char *why)
{
    if (!t->reset_pending) {
        atomic_fetch_add(&t->resets, 1);
        tn_log(TN_LOG_WARN, "publish",
               "\"target misses events, sending a reset\" target=\"%s\" "
               "why=\"%s\" cursor=%llu head=%llu",
               t->label, why, (unsigned long long)atomic_load(&t->cursor),
               (unsigned long long)head);
    }
    t->reset_pending = true;
    t->reset_id = head;
}

/* One round: 1 when something was sent, 0 when idle, <0 on failure. */
/* PostgreSQL: only the cluster's publisher sends.  At the start of its
 * term a target goes on from the log's head, its ids mapped above every
 * id reserved before, after a reset if another publisher came first.
 * 1 to go on with the round, 0 when not the publisher, <0 on failure. */
static int pg_term(struct target *t, uint64_t head)
{
    struct tn_publish *p = t->p;
    if (!atomic_load(&p->lead.leader)) {
        atomic_store(&t->cursor, head);
        atomic_store(&t->oldest_ms, 0);
        t->reset_pending = false;
        t->term = 0;
        return 0;
    }
    uint64_t term = atomic_load(&p->lead.term);
    if (term == t->term)
        return 1;
    uint64_t hi = 0;
    int rc = tn_pub_leader_begin(&p->lead, t->label, &hi);
    if (rc < 0)
        return rc;
    /* From the head when the lock was taken, not when this thread noticed:
     * events in between were heard by no other publisher. */
    uint64_t start = atomic_load(&p->lead.term_head);
    if (start < head)
        head = start;
    t->term = term;
    t->reserved = hi;
    t->reset_pending = hi > 0;
    t->reset_id = head;
    t->offset = hi + (hi > 0 ? 1 : 0) - head;
    atomic_store(&t->cursor, head);
    tn_pub_reader_seek(&t->rd, head + 1);
    if (hi > 0)
        tn_log(TN_LOG_INFO, "publish",
               "\"taking over from an earlier publisher, with a reset\" "
               "target=\"%s\" first_id=%llu",
               t->label, (unsigned long long)(hi + 1));
    return 1;
}

/* PostgreSQL: the batch with ids as sent, once they are reserved. */
static int pg_map(struct target *t, size_t n, const struct tn_pub_record **out)
{
    for (size_t i = 0; i < n; i++) {
        t->mapped[i] = t->batch[i];
        t->mapped[i].id += t->offset;
    }
    *out = t->mapped;
    return tn_pub_leader_reserve(&t->p->lead, t->label, t->mapped[n - 1].id,
                                 &t->reserved);
}

static int round_once(struct target *t)
{
    struct tn_publish *p = t->p;
    uint64_t head = atomic_load(&p->head);
    if (p->pg) {
        int rc = pg_term(t, head);
        if (rc <= 0)
            return rc;
    }
    uint64_t cur = atomic_load(&t->cursor);
    if (head > cur && head - cur > p->backlog)
        decide_reset(t, head, "backlog full");
    struct tn_errmsg em = {{0}};
    size_t n = 0, acked = 0;
    if (t->reset_pending) {
        struct tn_pub_record *r = &t->batch[0];
        memset(r, 0, sizeof(*r));
        r->id = t->reset_id;
        r->type = TN_EVENT_RESET;
        r->at_ms = tn_clock_wall_ms();
        n = 1;
    } else {
        if (head <= cur) {
            atomic_store(&t->oldest_ms, 0);
            return 0;
        }
        if (t->rd.next_id != cur + 1)
            tn_pub_reader_seek(&t->rd, cur + 1);
        int rc = tn_pub_reader_next(&t->rd, head, t->batch, BATCH_MAX, &n);
        if (rc == TN_ENOTFOUND) {
            decide_reset(t, head, "the event log no longer holds the cursor");
            return 1;
        }
        if (rc < 0) {
            tn_log(TN_LOG_ERROR, "publish",
                   "\"cannot read the event log\" err=%s", tn_errname(rc));
            return rc;
        }
        if (n == 0)
            return 0;
        atomic_store(&t->oldest_ms, t->batch[0].at_ms);
    }
    const struct tn_pub_record *send = t->batch;
    int rc = p->pg ? pg_map(t, n, &send) : TN_OK;
    if (rc == 0)
        rc = t->ops->send(t->impl, send, n, &acked, &em);
    if (acked > 0) {
        uint64_t last = t->batch[acked - 1].id;
        if (t->reset_pending) {
            t->reset_pending = false;
            tn_pub_reader_seek(&t->rd, last + 1);
        }
        atomic_store(&t->cursor, last);
        atomic_fetch_add(&t->published, acked);
        if (acked < n)
            atomic_store(&t->oldest_ms, t->batch[acked].at_ms);
    }
    if (rc < 0) {
        if (atomic_load(&t->up))
            tn_log(TN_LOG_WARN, "publish",
                   "\"target down, keeping a backlog\" target=\"%s\" "
                   "err=%s detail=\"%s\"",
                   t->label, tn_errname(rc), em.text);
        atomic_store(&t->up, false);
        return rc;
    }
    if (!atomic_load(&t->up))
        tn_log(TN_LOG_INFO, "publish", "\"target up\" target=\"%s\"", t->label);
    atomic_store(&t->up, true);
    return 1;
}

static void *target_main(void *arg)
{
    struct target *t = arg;
    struct tn_publish *p = t->p;
    int64_t backoff = BACKOFF_MIN_MS;
    int64_t last_save = 0;
    while (!should_stop(t)) {
        int rc = round_once(t);
        uint64_t cur = atomic_load(&t->cursor);
        int64_t now = tn_clock_mono_ms();
        if (cur != t->saved && (rc <= 0 || now - last_save >= CURSOR_SAVE_MS)) {
            (void)save_cursor(t, cur);
            last_save = now;
        }
        if (rc < 0) {
            sleep_ms(p, backoff);
            backoff =
                backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
            continue;
        }
        backoff = BACKOFF_MIN_MS;
        if (rc == 0)
            wait_for(p, cur, 200);
    }
    uint64_t cur = atomic_load(&t->cursor);
    if (cur != t->saved)
        (void)save_cursor(t, cur);
    return NULL;
}

/* ---- configuration ---- */

/* A label for metrics and the cursor file: the URL without userinfo and
 * with every byte outside [A-Za-z0-9._:/-] made '_'. */
static void make_label(const char *url, char *out, size_t len)
{
    const char *s = strstr(url, "://");
    const char *rest = s != NULL ? s + 3 : url;
    const char *at = strchr(rest, '@');
    const char *slash = strchr(rest, '/');
    if (at != NULL && (slash == NULL || at < slash))
        rest = at + 1;
    size_t o = 0;
    if (s != NULL) {
        size_t sl = (size_t)(s - url);
        for (size_t i = 0; i < sl && o + 1 < len; i++)
            out[o++] = url[i];
        if (o + 3 < len) {
            memcpy(out + o, "://", 3);
            o += 3;
        }
    }
    for (; *rest && o + 1 < len; rest++) {
        char c = *rest;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' ||
                  c == '/' || c == '-' || c == ',';
        out[o++] = ok ? c : '_';
    }
    out[o] = '\0';
}

static void file_label(const char *label, char *out, size_t len)
{
    size_t o = 0;
    for (; *label && o + 1 < len; label++) {
        char c = *label;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '.' || c == '-';
        out[o++] = ok ? c : '_';
    }
    out[o] = '\0';
}

static int add_target(struct tn_publish *p, const char *url,
                      const struct tn_pub_target_opts *o, struct tn_errmsg *em)
{
    const struct tn_pub_target_ops *ops = NULL;
    for (size_t i = 0; i < sizeof(target_kinds) / sizeof(target_kinds[0]);
         i++) {
        size_t n = strlen(target_kinds[i]->scheme);
        if (strncmp(url, target_kinds[i]->scheme, n) == 0 &&
            strncmp(url + n, "://", 3) == 0)
            ops = target_kinds[i];
    }
    if (ops == NULL) {
        char label[160];
        make_label(url, label, sizeof(label));
        tn_errmsg_set(em,
                      "--publish \"%s\": the URL must start with redis://, "
                      "rediss:// or kafka://",
                      label);
        return TN_EINVAL;
    }
    struct target *t = &p->targets[p->n_targets];
    memset(t, 0, sizeof(*t));
    t->p = p;
    t->ops = ops;
    make_label(url, t->label, sizeof(t->label));
    for (size_t i = 0; i < p->n_targets; i++) {
        if (strcmp(p->targets[i].label, t->label) == 0) {
            tn_errmsg_set(em, "--publish \"%s\" is given twice", t->label);
            return TN_EINVAL;
        }
    }
    char fl[160];
    file_label(t->label, fl, sizeof(fl));
    char dir[sizeof(p->dir)];
    memcpy(dir, p->dir, sizeof(dir));
    (void)snprintf(t->cursor_path, sizeof(t->cursor_path), "%s/cursor-%s", dir,
                   fl);
    int rc = ops->open(url, o, &t->impl, em);
    if (rc < 0)
        return rc;
    t->batch = tn_calloc(BATCH_MAX, sizeof(*t->batch));
    t->mapped = tn_calloc(BATCH_MAX, sizeof(*t->mapped));
    if (t->batch == NULL || t->mapped == NULL) {
        tn_free(t->batch);
        tn_free(t->mapped);
        ops->close(t->impl);
        return TN_ENOMEM;
    }
    tn_pub_reader_init(&t->rd, p->dir);
    p->n_targets++;
    return TN_OK;
}

static void free_all(struct tn_publish *p)
{
    for (size_t i = 0; i < p->n_targets; i++) {
        struct target *t = &p->targets[i];
        t->ops->close(t->impl);
        tn_pub_reader_release(&t->rd);
        tn_free(t->batch);
        tn_free(t->mapped);
    }
    if (p->pg)
        tn_pub_leader_release(&p->lead);
    if (p->lockfd >= 0)
        (void)close(p->lockfd);
    if (p->fd >= 0)
        (void)close(p->fd);
    if (p->retired_fd >= 0)
        (void)close(p->retired_fd);
    (void)pthread_cond_destroy(&p->cv);
    (void)pthread_mutex_destroy(&p->mu);
    tn_free(p);
}

int tn_publish_start(const struct tn_publish_config *cfg,
                     struct tn_publish **out, struct tn_errmsg *em)
{
    *out = NULL;
    if (cfg->n_urls == 0 || cfg->n_urls > TN_PUBLISH_MAX_TARGETS ||
        cfg->n_opts > TN_PUBLISH_MAX_OPTS) {
        tn_errmsg_set(em,
                      "between 1 and %d --publish URLs, at most %d "
                      "--publish-opt",
                      TN_PUBLISH_MAX_TARGETS, TN_PUBLISH_MAX_OPTS);
        return TN_EINVAL;
    }
    struct tn_publish *p = tn_calloc(1, sizeof(*p));
    if (p == NULL)
        return TN_ENOMEM;
    p->fd = -1;
    p->retired_fd = -1;
    p->lockfd = -1;
    (void)pthread_mutex_init(&p->mu, NULL);
    (void)tn_clock_cond_init(&p->cv);
    size_t dlen = strnlen(cfg->dir, sizeof(p->dir) - 1);
    memcpy(p->dir, cfg->dir, dlen);
    p->dir[dlen] = '\0';
    p->backlog = cfg->backlog > 0 ? cfg->backlog : 1;
    p->segment_events =
        cfg->segment_events > 0 ? cfg->segment_events : SEGMENT_EVENTS;
    struct tn_pub_target_opts o = {
        .kv = cfg->opts, .n_kv = cfg->n_opts, .maxlen = cfg->maxlen};
    int rc = TN_OK;
    if (cfg->pg_url != NULL) {
        rc = tn_pub_leader_init(&p->lead, cfg->pg_url);
        p->pg = rc == 0;
    }
    for (size_t i = 0; rc == 0 && i < cfg->n_urls; i++)
        rc = add_target(p, cfg->urls[i], &o, em);
    bool was_clean = true;
    if (rc == 0 && (rc = open_log(p, &was_clean)) < 0)
        tn_errmsg_set(em, "cannot open the event log in \"%s\"", p->dir);
    if (rc < 0) {
        free_all(p);
        return rc;
    }
    if (!was_clean) {
        /* Changes committed just before a crash may never have been
         * logged: say so, once, to every target. */
        struct tn_event reset = {.type = TN_EVENT_RESET};
        tn_publish_event(p, &reset);
        tn_log(TN_LOG_WARN, "publish",
               "\"the last stop was not clean; the log continues with a "
               "reset\" id=%llu",
               (unsigned long long)atomic_load(&p->head));
    }
    uint64_t head = atomic_load(&p->head);
    for (size_t i = 0; i < p->n_targets; i++) {
        struct target *t = &p->targets[i];
        uint64_t c = load_cursor(t, head);
        t->saved = c;
        if (c > head) {
            /* The log lost records the target already has (it was
             * removed or cut): ids would repeat. */
            decide_reset(t, head, "the event log is behind the cursor");
            c = head;
        }
        atomic_store(&t->cursor, c);
        atomic_store(&t->up, true);
        tn_pub_reader_seek(&t->rd, c + 1);
    }
    if (pthread_create(&p->flusher, NULL, flusher_main, p) != 0) {
        free_all(p);
        return TN_ENOMEM;
    }
    p->flusher_started = true;
    for (size_t i = 0; i < p->n_targets; i++) {
        struct target *t = &p->targets[i];
        if (pthread_create(&t->thread, NULL, target_main, t) != 0) {
            tn_publish_stop(p, 0);
            return TN_ENOMEM;
        }
        t->started = true;
        tn_log(TN_LOG_INFO, "publish",
               "\"publishing events\" target=\"%s\" cursor=%llu head=%llu",
               t->label, (unsigned long long)atomic_load(&t->cursor),
               (unsigned long long)head);
    }
    *out = p;
    return TN_OK;
}

void tn_publish_stop(struct tn_publish *p, int64_t grace_ms)
{
    if (p == NULL)
        return;
    atomic_store(&p->drain_until_ms, tn_clock_mono_ms() + grace_ms);
    (void)pthread_mutex_lock(&p->mu);
    atomic_store(&p->stopping, true);
    (void)pthread_cond_broadcast(&p->cv);
    (void)pthread_mutex_unlock(&p->mu);
    for (size_t i = 0; i < p->n_targets; i++) {
        if (p->targets[i].started)
            (void)pthread_join(p->targets[i].thread, NULL);
    }
    if (p->flusher_started)
        (void)pthread_join(p->flusher, NULL);
    bool synced = p->fd >= 0 && fdatasync(p->fd) == 0;
    if (synced && !p->lost) {
        char clean[1200];
        (void)snprintf(clean, sizeof(clean), "%s/clean", p->dir);
        int fd = open(clean, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0)
            (void)close(fd);
    }
    free_all(p);
}

void tn_publish_metrics(struct tn_publish *p, struct tn_buf *out)
{
    if (p == NULL)
        return;
    uint64_t head = atomic_load(&p->head);
    int64_t now = tn_clock_wall_ms();
    (void)tn_buf_printf(out,
                        "# TYPE tenure_publish_log_head gauge\n"
                        "tenure_publish_log_head %llu\n"
                        "# TYPE tenure_publish_log_write_failures_total "
                        "counter\n"
                        "tenure_publish_log_write_failures_total %llu\n"
                        "# TYPE tenure_publish_leader gauge\n"
                        "tenure_publish_leader %d\n",
                        (unsigned long long)head,
                        (unsigned long long)atomic_load(&p->write_failures),
                        !p->pg || atomic_load(&p->lead.leader) ? 1 : 0);
    static const char *const heads[] = {
        "# TYPE tenure_publish_events_total counter\n",
        "# TYPE tenure_publish_lag_events gauge\n",
        "# TYPE tenure_publish_lag_ms gauge\n",
        "# TYPE tenure_publish_resets_total counter\n",
        "# TYPE tenure_publish_up gauge\n"};
    static const char *const names[] = {
        "tenure_publish_events_total", "tenure_publish_lag_events",
        "tenure_publish_lag_ms", "tenure_publish_resets_total",
        "tenure_publish_up"};
    for (size_t m = 0; m < 5; m++) {
        (void)tn_buf_printf(out, "%s", heads[m]);
        for (size_t i = 0; i < p->n_targets; i++) {
            struct target *t = &p->targets[i];
            uint64_t cur = atomic_load(&t->cursor);
            int64_t oldest = atomic_load(&t->oldest_ms);
            uint64_t v = 0;
            switch (m) {
            case 0:
                v = atomic_load(&t->published);
                break;
            case 1:
                v = head > cur ? head - cur : 0;
                break;
            case 2:
                v = head > cur && oldest > 0 && now > oldest
                        ? (uint64_t)(now - oldest)
                        : 0;
                break;
            case 3:
                v = atomic_load(&t->resets);
                break;
            default:
                v = atomic_load(&t->up) ? 1 : 0;
                break;
            }
            (void)tn_buf_printf(out, "%s{target=\"%s\"} %llu\n", names[m],
                                t->label, (unsigned long long)v);
        }
    }
}
