/* SPDX-License-Identifier: MIT */
/* The publisher (publish.h): the log writer on the loop thread, a flusher
 * thread (fdatasync, retention) -- both in writer.c -- and one thread per
 * target that sends the log from its cursor (sender.c); this file holds
 * the configuration, start, stop and metrics.  A target's cursor is the
 * last id it acknowledged, saved atomically in dir/cursor-<label>;
 * sending after it again after a crash is what makes delivery at least
 * once.  Shared state between threads is atomics plus one mutex for the
 * file handover and the wake-up of idle targets. */
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
#include "common/url.h"
#include "internal.h"

static const struct tn_pub_target_ops *const target_kinds[] = {
    &tn_pub_redis_ops, &tn_pub_rediss_ops, &tn_pub_kafka_ops};

/* ---- shared helpers ---- */

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

/* A session's record: {"id","type","session_id","owner_id"[,"reason"],
 * "at_ms"}, the shape of the server's own session events. */
static void json_session(struct tn_buf *b, const struct tn_pub_record *r)
{
    (void)tn_buf_printf(b,
                        "{\"id\":%llu,\"type\":\"%s\",\"session_id\":\"%s\","
                        "\"owner_id\":",
                        (unsigned long long)r->id, tn_event_type_name(r->type),
                        r->session_id);
    tn_pub_json_str(b, r->owner_id);
    if (r->type == TN_EVENT_SESSION_ENDED)
        (void)tn_buf_printf(b, ",\"reason\":\"%s\"", tn_grant_end_name(r->end));
    (void)tn_buf_printf(b, ",\"at_ms\":%lld}", (long long)r->at_ms);
}

void tn_pub_json_record(struct tn_buf *b, const struct tn_pub_record *r)
{
    if (tn_pub_is_session(r->type)) {
        json_session(b, r);
        return;
    }
    (void)tn_buf_printf(b, "{\"id\":%llu,\"type\":\"%s\",\"name\":",
                        (unsigned long long)r->id, tn_event_type_name(r->type));
    tn_pub_json_str(b, r->name);
    (void)tn_buf_append(b, ",\"owner_id\":", 12);
    tn_pub_json_str(b, r->owner_id);
    (void)tn_buf_printf(b, ",\"token\":%llu,\"floor\":%llu,\"at_ms\":%lld}",
                        (unsigned long long)r->token,
                        (unsigned long long)r->floor, (long long)r->at_ms);
}

/* ---- configuration ---- */

/* A label for metrics and the cursor file: the URL without userinfo and
 * with every byte outside [A-Za-z0-9._:/-] made '_'.  The userinfo is
 * what the one URL parser (common/url.h) takes for it, up to the last '@'
 * (a password may hold one); a URL it refuses loses everything up to its
 * last '@'. */
static void make_label(const char *url, char *out, size_t len)
{
    const char *s = strstr(url, "://");
    struct tn_url u;
    const char *rest = strrchr(url, '@');
    if (tn_url_parse(url, strlen(url), 0, TN_URL_HOST_LIST, &u) == 0)
        rest = u.authority;
    else if (rest != NULL)
        rest++;
    else
        rest = s != NULL ? s + 3 : url;
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
    if (rc == 0 && (rc = tn_pub_open_log(p, &was_clean)) < 0)
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
        uint64_t c = tn_pub_load_cursor(t, head);
        t->saved = c;
        if (c > head) {
            /* The log lost records the target already has (it was
             * removed or cut): ids would repeat. */
            tn_pub_decide_reset(t, head, "the event log is behind the cursor");
            c = head;
        }
        atomic_store(&t->cursor, c);
        atomic_store(&t->up, true);
        tn_pub_reader_seek(&t->rd, c + 1);
    }
    if (pthread_create(&p->flusher, NULL, tn_pub_flusher_main, p) != 0) {
        free_all(p);
        return TN_ENOMEM;
    }
    p->flusher_started = true;
    for (size_t i = 0; i < p->n_targets; i++) {
        struct target *t = &p->targets[i];
        if (pthread_create(&t->thread, NULL, tn_pub_target_main, t) != 0) {
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
