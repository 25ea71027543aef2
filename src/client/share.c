/* SPDX-License-Identifier: MIT */
/* The fair-share recipe (<tenure/share.h>): the share's thread opens the
 * session (again after a loss), keeps it with the client's keepalive, and
 * runs a round (share_round.c) whenever something changed or every
 * rebalance_ms; a second thread follows the event stream of the shards'
 * prefix, which also carries every session's opening and end, and wakes
 * the loop when a worker of the group joins or leaves or a shard is freed.
 * The follower is only a latency aid: the periodic round finds every
 * change without it. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <tenure/session.h>
#include <tenure/share.h>

#include "client/client_internal.h"
#include "client/share_int.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/clock.h"

void tn_share_options_init(struct tn_share_options *o)
{
    memset(o, 0, sizeof(*o));
    o->ttl_ms = 10000;
    o->rebalance_ms = 2000;
}

static void wake_loop(struct tn_share *sh)
{
    (void)pthread_mutex_lock(&sh->mu);
    sh->wake = true;
    (void)pthread_cond_signal(&sh->cond);
    (void)pthread_mutex_unlock(&sh->mu);
}

static void set_error(struct tn_share *sh, int rc, const struct tn_errmsg *em)
{
    (void)pthread_mutex_lock(&sh->mu);
    sh->last_rc = rc;
    if (rc < 0 && em != NULL)
        sh->last_em = *em;
    else
        sh->last_em.text[0] = '\0';
    (void)pthread_mutex_unlock(&sh->mu);
}

/* ---- the keepalive's callbacks (on its thread) ---- */

static void on_lease_end(struct tn_lease *l, enum tn_lease_end why, int rc,
                         void *ud)
{
    (void)l, (void)why, (void)rc;
    wake_loop(ud);
}

static void on_session_end(struct tn_session *s, enum tn_lease_end why, int rc,
                           void *ud)
{
    struct tn_share *sh = ud;
    (void)s, (void)why, (void)rc;
    (void)pthread_mutex_lock(&sh->mu);
    sh->session_over = true;
    sh->wake = true;
    (void)pthread_cond_signal(&sh->cond);
    (void)pthread_mutex_unlock(&sh->mu);
}

/* ---- the event follower ---- */

static bool of_group(const struct tn_share *sh, json_t *v)
{
    const char *owner = json_string_value(json_object_get(v, "owner_id"));
    return owner != NULL &&
           strncmp(owner, sh->group_prefix, strlen(sh->group_prefix)) == 0;
}

static void on_event(void *ud, const char *data)
{
    struct tn_share *sh = ud;
    json_error_t err;
    json_t *v = json_loads(data, 0, &err);
    const char *type = json_string_value(json_object_get(v, "type"));
    const char *name = json_string_value(json_object_get(v, "name"));
    const char *sid = json_string_value(json_object_get(v, "session_id"));
    json_t *tok = json_object_get(v, "token");
    bool wake = false;
    if (type == NULL) {
        /* not an event: ignored */
    } else if (strcmp(type, "reset") == 0) {
        tn_client_events_renew_all(sh->c); /* events were missed */
        wake = true;
    } else if (sid != NULL && strncmp(type, "session_", 8) == 0) {
        tn_client_events_apply_session(sh->c, type, sid);
        wake = of_group(sh, v);
    } else if (name != NULL && json_is_integer(tok)) {
        tn_client_events_apply(sh->c, type, name,
                               (uint64_t)json_integer_value(tok));
        wake = strcmp(type, "acquired") != 0; /* a shard was freed */
    }
    json_decref(v);
    if (wake)
        wake_loop(sh);
}

static void *follower_main(void *arg)
{
    struct tn_share *sh = arg;
    struct tn_client_sse f = {sh->c, sh->query, on_event, sh, &sh->stop};
    tn_client_sse_run(&f);
    return NULL;
}

/* ---- the loop ---- */

static int open_session(struct tn_share *sh)
{
    struct tn_session_args a = {.owner_id = sh->owner, .ttl_ms = sh->ttl_ms};
    struct tn_errmsg em = {{0}};
    /* Before the keepalive starts: its end may come at once. */
    (void)pthread_mutex_lock(&sh->mu);
    sh->session_over = false;
    (void)pthread_mutex_unlock(&sh->mu);
    int rc = tn_client_session_open(sh->c, &a, &sh->s, &em);
    if (rc == 0)
        rc = tn_client_session_keepalive_start(sh->s, on_session_end,
                                               on_lease_end, sh);
    if (rc < 0) {
        tn_client_session_free(sh->s);
        sh->s = NULL;
    }
    set_error(sh, rc, &em);
    return rc;
}

/* Let the session go: every shard still held is reported first (given
 * back: RELEASED), then the session is ended (end_it: every shard is free
 * at once) or left to run out, and its keepalive stopped.  The keepalive's
 * callbacks name sh: the session's comes last, so once it ran none will
 * run again, and only then may the share forget the session (and, at
 * stop, be freed). */
static void close_session(struct tn_share *sh, bool end_it)
{
    tn_share_drop_all(sh, TN_LEASE_END_RELEASED);
    if (end_it)
        (void)tn_client_session_end(sh->s, NULL);
    tn_client_session_keepalive_stop(sh->s);
    (void)pthread_mutex_lock(&sh->mu);
    while (!sh->session_over)
        (void)pthread_cond_wait(&sh->cond, &sh->mu);
    (void)pthread_mutex_unlock(&sh->mu);
    tn_client_session_free(sh->s);
    sh->s = NULL;
}

/* Wait until woken or ms passed; true when stopping. */
static bool wait_turn(struct tn_share *sh, int64_t ms)
{
    struct timespec until = tn_clock_mono_deadline(ms);
    (void)pthread_mutex_lock(&sh->mu);
    while (!sh->wake && !atomic_load(&sh->stop)) {
        if (pthread_cond_timedwait(&sh->cond, &sh->mu, &until) != 0)
            break;
    }
    sh->wake = false;
    (void)pthread_mutex_unlock(&sh->mu);
    /* Not live any more (lost, ran out): its keepalive may not have said
     * so yet, the safe time already has. */
    if (sh->s != NULL && !tn_client_session_is_live(sh->s)) {
        tn_share_reap(sh); /* lost or expired, each shard once */
        close_session(sh, false);
    }
    return atomic_load(&sh->stop);
}

static void *share_main(void *arg)
{
    struct tn_share *sh = arg;
    for (;;) {
        if (sh->s == NULL)
            (void)open_session(sh);
        if (sh->s != NULL) {
            struct tn_errmsg em = {{0}};
            int rc = tn_share_round(sh, &em);
            set_error(sh, rc, &em);
        }
        if (wait_turn(sh, sh->rebalance_ms))
            break;
    }
    if (sh->s != NULL)
        close_session(sh, true);
    return NULL;
}

/* ---- start and stop ---- */

static int cmp_shard(const void *a, const void *b)
{
    return strcmp(((const struct tn_share_shard *)a)->name,
                  ((const struct tn_share_shard *)b)->name);
}

static int check_options(const struct tn_share_options *o, struct tn_errmsg *em)
{
    if (o->group == NULL || o->group[0] == '\0' || strchr(o->group, '/')) {
        tn_errmsg_set(em, "a share needs a group name without '/'");
        return TN_EINVAL;
    }
    if (o->shards == NULL || o->n_shards == 0 || o->ttl_ms <= 0 ||
        o->rebalance_ms <= 0 || o->lock_delay_ms < 0) {
        tn_errmsg_set(em, "a share needs shards, a positive ttl_ms and "
                          "rebalance_ms");
        return TN_EINVAL;
    }
    for (size_t i = 0; i < o->n_shards; i++) {
        int rc = tn_client_valid_name(o->shards[i], em);
        if (rc < 0)
            return rc;
    }
    return TN_OK;
}

/* The longest prefix every shard name shares. */
static char *common_prefix(const struct tn_share_shard *d, size_t n)
{
    size_t len = strlen(d[0].name);
    for (size_t i = 1; i < n; i++) {
        size_t k = 0;
        while (k < len && d[i].name[k] == d[0].name[k])
            k++;
        len = k;
    }
    return tn_strndup(d[0].name, len);
}

static char *join(const char *a, const char *b, const char *c)
{
    struct tn_buf buf;
    tn_buf_init(&buf, 4096);
    if (tn_buf_printf(&buf, "%s%s%s", a, b, c) < 0) {
        tn_buf_release(&buf);
        return NULL;
    }
    return buf.data;
}

static int copy_shards(struct tn_share *sh, const struct tn_share_options *o,
                       struct tn_errmsg *em)
{
    sh->shards = tn_calloc(o->n_shards, sizeof(*sh->shards));
    if (sh->shards == NULL)
        return TN_ENOMEM;
    for (size_t i = 0; i < o->n_shards; i++) {
        if ((sh->shards[i].name = tn_strdup(o->shards[i])) == NULL)
            return TN_ENOMEM;
        sh->n = i + 1;
    }
    qsort(sh->shards, sh->n, sizeof(*sh->shards), cmp_shard);
    for (size_t i = 1; i < sh->n; i++) {
        if (strcmp(sh->shards[i - 1].name, sh->shards[i].name) == 0) {
            tn_errmsg_set(em, "shard \"%s\" is listed twice",
                          sh->shards[i].name);
            return TN_EINVAL;
        }
    }
    return TN_OK;
}

static int init_names(struct tn_share *sh, const struct tn_share_options *o)
{
    char host[64] = "localhost";
    char pid[32];
    (void)gethostname(host, sizeof(host) - 1);
    (void)snprintf(pid, sizeof(pid), ":%ld", (long)getpid());
    sh->group_prefix = join(o->group, "/", "");
    sh->owner = o->worker != NULL ? join(o->group, "/", o->worker)
                                  : join(sh->group_prefix, host, pid);
    sh->list_prefix = o->list_prefix != NULL ? tn_strdup(o->list_prefix)
                                             : common_prefix(sh->shards, sh->n);
    char *esc =
        sh->list_prefix != NULL ? tn_client_http_escape(sh->list_prefix) : NULL;
    sh->query = esc != NULL ? join("?prefix=", esc, "") : NULL;
    tn_free(esc);
    if (sh->group_prefix == NULL || sh->owner == NULL || sh->query == NULL)
        return TN_ENOMEM;
    return strlen(sh->owner) <= TN_CLIENT_OWNER_MAX ? TN_OK : TN_EINVAL;
}

static void share_free(struct tn_share *sh)
{
    for (size_t i = 0; i < sh->n; i++)
        tn_free(sh->shards[i].name);
    tn_free(sh->shards);
    tn_free(sh->owner);
    tn_free(sh->group_prefix);
    tn_free(sh->list_prefix);
    tn_free(sh->query);
    (void)pthread_cond_destroy(&sh->cond);
    (void)pthread_mutex_destroy(&sh->mu);
    tn_free(sh);
}

static int start_threads(struct tn_share *sh)
{
    if (pthread_create(&sh->ev_thread, NULL, follower_main, sh) != 0)
        return TN_EIO;
    sh->ev_started = true;
    if (pthread_create(&sh->thread, NULL, share_main, sh) != 0) {
        atomic_store(&sh->stop, true);
        (void)pthread_join(sh->ev_thread, NULL);
        return TN_EIO;
    }
    return TN_OK;
}

int tn_share_start(struct tn_client *c, const struct tn_share_options *o,
                   struct tn_share **out, struct tn_errmsg *em)
{
    *out = NULL;
    int rc = check_options(o, em);
    if (rc < 0)
        return rc;
    struct tn_share *sh = tn_calloc(1, sizeof(*sh));
    if (sh == NULL)
        return TN_ENOMEM;
    sh->c = c;
    sh->ttl_ms = o->ttl_ms;
    sh->rebalance_ms = o->rebalance_ms;
    sh->lock_delay_ms = o->lock_delay_ms;
    sh->gained = o->gained;
    sh->lost = o->lost;
    sh->ud = o->ud;
    atomic_init(&sh->stop, false);
    (void)pthread_mutex_init(&sh->mu, NULL);
    rc = tn_clock_cond_init(&sh->cond);
    if (rc == 0)
        rc = copy_shards(sh, o, em);
    if (rc == 0)
        rc = init_names(sh, o);
    if (rc == TN_EINVAL && em != NULL && em->text[0] == '\0')
        tn_errmsg_set(em, "the owner_id \"%s/<worker>\" is over %d bytes",
                      o->group, TN_CLIENT_OWNER_MAX);
    if (rc == 0)
        rc = start_threads(sh);
    if (rc < 0) {
        share_free(sh);
        return rc;
    }
    *out = sh;
    return TN_OK;
}

void tn_share_stop(struct tn_share *sh)
{
    if (sh == NULL)
        return;
    atomic_store(&sh->stop, true);
    wake_loop(sh);
    (void)pthread_join(sh->thread, NULL);
    if (sh->ev_started)
        (void)pthread_join(sh->ev_thread, NULL);
    share_free(sh);
}

size_t tn_share_count(struct tn_share *sh)
{
    (void)pthread_mutex_lock(&sh->mu);
    size_t n = sh->count;
    (void)pthread_mutex_unlock(&sh->mu);
    return n;
}

int tn_share_last_error(struct tn_share *sh, struct tn_errmsg *em)
{
    (void)pthread_mutex_lock(&sh->mu);
    int rc = sh->last_rc;
    if (em != NULL)
        *em = sh->last_em;
    (void)pthread_mutex_unlock(&sh->mu);
    return rc;
}
