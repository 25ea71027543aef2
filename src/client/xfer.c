/* SPDX-License-Identifier: MIT */
/* The keepalive thread's transport: up to n requests at once on one curl
 * multi handle, each on its own connection (HTTP/1.1 has no multiplexing
 * and curl no longer pipelines), the connections kept between requests.
 * The failover rule is tn_client_http_do's: a request moves to the next
 * URL when nothing was sent or a URL that is not the last answered 503,
 * never after it was sent and no answer came, and never past its
 * deadline.  What is resent must be safe to repeat (renews are
 * conditional on the credential).  Used by one thread; only
 * tn_xfer_pool_wakeup may be called from others. */
#include <stdio.h>
#include <string.h>

#include <tenure/err.h>

#include "client/client_internal.h"
#include "common/alloc.h"

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct tn_buf *b = ud;
    if (tn_buf_append(b, p, size * n) < 0)
        return 0; /* over the cap: CURLE_WRITE_ERROR */
    return size * n;
}

int tn_xfer_pool_init(struct tn_xfer_pool *p, struct tn_client_http *h,
                      size_t n)
{
    memset(p, 0, sizeof(*p));
    p->h = h;
    p->multi = curl_multi_init();
    p->x = tn_calloc(n, sizeof(*p->x));
    if (p->multi == NULL || p->x == NULL)
        goto out_fail;
    p->n = n;
    for (size_t i = 0; i < n; i++) {
        p->x[i].easy = curl_easy_init();
        if (p->x[i].easy == NULL)
            goto out_fail;
        tn_buf_init(&p->x[i].resp, TN_CLIENT_BODY_MAX);
    }
    /* At most n transfers run, each with a connection of its own: none
     * waits inside curl for a connection (its sent_ms would lie). */
    (void)curl_multi_setopt(p->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)n);
    (void)curl_multi_setopt(p->multi, CURLMOPT_MAXCONNECTS, (long)n);
    return TN_OK;
out_fail:
    tn_xfer_pool_release(p);
    return TN_ENOMEM;
}

static void clear(struct tn_xfer *x)
{
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
    tn_free(x->path);
    tn_free(x->body);
    x->path = x->body = NULL;
    tn_buf_reset(&x->resp);
    x->busy = false;
    x->owner = NULL;
}

void tn_xfer_pool_release(struct tn_xfer_pool *p)
{
    for (size_t i = 0; p->x != NULL && i < p->n; i++) {
        struct tn_xfer *x = &p->x[i];
        if (x->busy)
            (void)curl_multi_remove_handle(p->multi, x->easy);
        clear(x);
        tn_buf_release(&x->resp);
        if (x->easy != NULL)
            curl_easy_cleanup(x->easy);
    }
    tn_free(p->x);
    if (p->multi != NULL)
        (void)curl_multi_cleanup(p->multi);
    memset(p, 0, sizeof(*p));
}

struct tn_xfer *tn_xfer_get(struct tn_xfer_pool *p)
{
    for (size_t i = 0; i < p->n; i++) {
        if (!p->x[i].busy)
            return &p->x[i];
    }
    return NULL;
}

/* Start one attempt of x against URL x->url_i.  0 or a tn_err. */
static int attempt(struct tn_xfer_pool *p, struct tn_xfer *x)
{
    const struct tn_client_http *h = p->h;
    int64_t left = x->deadline_ms - h->now_ms();
    if (left <= 0)
        return TN_ETIMEDOUT;
    char url[4096];
    int n = snprintf(url, sizeof(url), "%s%s", h->urls[x->url_i], x->path);
    if (n < 0 || (size_t)n >= sizeof(url))
        return TN_ETOOBIG;
    struct tn_client_http_attempt a = {.method = x->method,
                                       .path = x->path,
                                       .url = url,
                                       .body = x->body,
                                       .timeout_ms = left,
                                       .hdrs = x->hdrs,
                                       .out = &x->resp};
    a.connect_ms = h->connect_timeout_ms < left ? h->connect_timeout_ms : left;
    tn_buf_reset(&x->resp);
    tn_client_http_setup(x->easy, h, &a);
    /* Our own body sink and our handle, for collecting. */
    (void)curl_easy_setopt(x->easy, CURLOPT_WRITEFUNCTION, on_body);
    (void)curl_easy_setopt(x->easy, CURLOPT_WRITEDATA, &x->resp);
    (void)curl_easy_setopt(x->easy, CURLOPT_PRIVATE, (void *)x);
    x->tries++;
    x->status = 0;
    x->sent_ms = h->now_ms();
    if (curl_multi_add_handle(p->multi, x->easy) != CURLM_OK)
        return TN_EIO;
    return TN_OK;
}

int tn_xfer_start(struct tn_xfer_pool *p, struct tn_xfer *x, const char *method,
                  char *path, char *body, int64_t deadline_ms)
{
    x->path = path;
    x->body = body;
    x->method = method;
    x->deadline_ms = deadline_ms;
    x->url_i = p->h->preferred;
    x->tries = 0;
    x->rc = 0;
    x->err[0] = '\0';
    x->hdrs = tn_client_http_headers(p->h, body != NULL);
    int rc = path != NULL && x->hdrs != NULL ? TN_OK : TN_ENOMEM;
    if (rc == 0)
        rc = attempt(p, x);
    if (rc < 0) {
        clear(x);
        return rc;
    }
    x->busy = true;
    p->busy++;
    return TN_OK;
}

/* x's attempt ended with cc: true when it was started again on the next
 * URL, false when x is done (its status or rc set). */
static bool retry_or_finish(struct tn_xfer_pool *p, struct tn_xfer *x,
                            CURLcode cc)
{
    struct tn_client_http *h = p->h;
    (void)curl_multi_remove_handle(p->multi, x->easy);
    if (cc == CURLE_OK) {
        (void)curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
        x->rc = 0;
    } else {
        x->rc = tn_client_http_map_curl(x->easy, cc);
        (void)snprintf(x->err, sizeof(x->err), "%s %s: %s", x->method,
                       h->urls[x->url_i], curl_easy_strerror(cc));
    }
    bool moves = x->rc == TN_ECONNECT || (x->rc == 0 && x->status == 503);
    if (moves && x->tries < h->n_urls) {
        x->url_i = (x->url_i + 1) % h->n_urls;
        int rc = attempt(p, x);
        if (rc == 0)
            return true;
        if (x->rc == 0 && x->status == 503)
            return false; /* the 503 stands */
        x->rc = rc;
        return false;
    }
    if (x->rc == 0)
        h->preferred = x->url_i;
    return false;
}

size_t tn_xfer_pool_run(struct tn_xfer_pool *p, int64_t timeout_ms,
                        struct tn_xfer **done, size_t cap)
{
    int running = 0;
    size_t n = 0;
    (void)curl_multi_perform(p->multi, &running);
    for (;;) {
        int left = 0;
        CURLMsg *m = curl_multi_info_read(p->multi, &left);
        if (m != NULL && m->msg == CURLMSG_DONE) {
            struct tn_xfer *x = NULL;
            (void)curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &x);
            if (!retry_or_finish(p, x, m->data.result) && n < cap)
                done[n++] = x;
            continue;
        }
        if (m == NULL)
            break;
    }
    if (n > 0)
        return n;
    if (timeout_ms > 60000)
        timeout_ms = 60000;
    (void)curl_multi_poll(p->multi, NULL, 0,
                          (int)(timeout_ms > 0 ? timeout_ms : 0), NULL);
    return 0;
}

void tn_xfer_put(struct tn_xfer_pool *p, struct tn_xfer *x)
{
    if (!x->busy)
        return;
    /* Still running (an abort): taking it out of the multi handle closes
     * its connection, so nothing of it is read later. */
    (void)curl_multi_remove_handle(p->multi, x->easy);
    clear(x);
    p->busy--;
}

void tn_xfer_pool_wakeup(struct tn_xfer_pool *p)
{
    if (p->multi != NULL)
        (void)curl_multi_wakeup(p->multi);
}
