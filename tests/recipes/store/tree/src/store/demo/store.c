/* SPDX-License-Identifier: MIT */
/* The demo store: the skeleton of a backend.  It answers every request
 * TN_EUNAVAIL (a real one makes the decision durable before done). */
#include <tenure/err.h>

#include "common/alloc.h"
#include "store/backend.h"

struct demo {
    struct tn_store base; /* first: the registry hands out &base */
    char *url;            /* where the data is (cfg->url) */
};

static void unavailable(struct tn_store_result *out, tn_store_done_fn done,
                        void *arg)
{
    out->rc = TN_EUNAVAIL;
    out->retry_after_ms = 1000;
    done(arg); /* exactly once, on the loop thread */
}

static void d_acquire(struct tn_store *s, const struct tn_acquire_req *r,
                      struct tn_store_result *out, tn_store_done_fn done,
                      void *arg)
{
    (void)s;
    (void)r;
    unavailable(out, done, arg);
}

/* renew and release */
static void d_token(struct tn_store *s, const struct tn_token_req *r,
                    struct tn_store_result *out, tn_store_done_fn done,
                    void *arg)
{
    (void)s;
    (void)r;
    unavailable(out, done, arg);
}

static void d_get(struct tn_store *s, const char *name, size_t name_len,
                  struct tn_store_result *out, tn_store_done_fn done, void *arg)
{
    (void)s;
    (void)name;
    (void)name_len;
    unavailable(out, done, arg);
}

static void d_check(struct tn_store *s, const char *name, size_t name_len,
                    uint64_t token, struct tn_store_result *out,
                    tn_store_done_fn done, void *arg)
{
    (void)s;
    (void)name;
    (void)name_len;
    (void)token;
    unavailable(out, done, arg);
}

static void d_list(struct tn_store *s, const struct tn_list_req *r,
                   struct tn_store_result *out, tn_store_done_fn done,
                   void *arg)
{
    (void)s;
    (void)r;
    unavailable(out, done, arg);
}

static bool d_is_ready(struct tn_store *s)
{
    (void)s;
    return true; /* /readyz: accepts writes */
}

static void d_metrics(struct tn_store *s, struct tn_buf *out)
{
    (void)s;
    (void)tn_buf_printf(out, "# TYPE tenure_store_ready gauge\n"
                             "tenure_store_ready 1\n");
}

static void d_close(struct tn_store *s)
{
    struct demo *d = (struct demo *)s;
    tn_free(d->url);
    tn_free(d);
}

static int d_open(struct tn_loop *loop, const struct tn_store_config *cfg,
                  struct tn_store **out, struct tn_errmsg *em);

/* Its line in the registry: src/store/backends.def. */
extern const struct tn_store_ops tn_store_demo_ops;
const struct tn_store_ops tn_store_demo_ops = {
    .version = TN_STORE_OPS_VERSION,
    .open = d_open,
    .acquire = d_acquire,
    .renew = d_token,
    .release = d_token,
    .get = d_get,
    .check = d_check,
    .list = d_list,
    .is_ready = d_is_ready,
    .metrics = d_metrics,
    .close = d_close,
    /* .history, .drain, .cancel_wait, .session_*: only with their caps */
};

static int d_open(struct tn_loop *loop, const struct tn_store_config *cfg,
                  struct tn_store **out, struct tn_errmsg *em)
{
    (void)loop;
    (void)em; /* say why with tn_errmsg_set when returning an error */
    struct demo *d = tn_calloc(1, sizeof(*d));
    if (d == NULL || (d->url = tn_strdup(cfg->url)) == NULL) {
        tn_free(d);
        return TN_ENOMEM;
    }
    d->base.ops = &tn_store_demo_ops;
    *out = &d->base;
    return TN_OK;
}
