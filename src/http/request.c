/* SPDX-License-Identifier: MIT */
/* The request object: made, freed and kept as a spare with its buffers
 * (so that a request in the steady state allocates nothing), and what the
 * application reads of it and sets on it.  parse.c fills it. */
#include <string.h>
#include <strings.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "http_int.h"

/* Finished requests kept, with their buffers, so that a request in the
 * steady state allocates nothing here. */
#define SPARE_REQS 256
#define SPARE_BUF_BYTES 8192 /* a spare keeps buffers up to this big */

struct tn_http_req *tn_http_req_new(struct tn_http *h, struct conn *c)
{
    struct tn_http_req *r = h->spare;
    if (r != NULL) {
        h->spare = r->next_spare;
        h->n_spare--;
        struct tn_buf head = r->head, args = r->args, body = r->body,
                      out = r->out;
        memset(r, 0, sizeof(*r));
        r->head = head; /* emptied by tn_http_req_free, storage kept */
        r->args = args;
        r->body = body;
        r->out = out;
    } else {
        if ((r = tn_calloc(1, sizeof(*r))) == NULL)
            return NULL;
        tn_buf_init(&r->head, h->cfg.max_header_bytes);
        tn_buf_init(&r->args, h->cfg.max_header_bytes);
        tn_buf_init(&r->body, h->cfg.max_body_bytes);
        tn_buf_init(&r->out, (size_t)-1);
    }
    r->h = h;
    r->c = c;
    return r;
}

void tn_http_req_destroy(struct tn_http_req *r)
{
    tn_buf_release(&r->head);
    tn_buf_release(&r->args);
    tn_buf_release(&r->body);
    tn_buf_release(&r->out);
    tn_free(r);
}

void tn_http_req_set_app(struct tn_http_req *r, void *data,
                         void (*free_fn)(void *data))
{
    r->app = data;
    r->app_free = free_fn;
}

void *tn_http_req_take_app(struct tn_http_req *r)
{
    void *data = r->app;
    r->app = NULL;
    return data;
}

void tn_http_req_free(struct tn_http_req *r)
{
    struct tn_http *h = r->h;
    if (r->app != NULL && r->app_free != NULL)
        r->app_free(r->app);
    r->app = NULL;
    tn_free(r->stream);
    r->stream = NULL;
    if (h->n_spare >= SPARE_REQS || r->head.cap > SPARE_BUF_BYTES ||
        r->args.cap > SPARE_BUF_BYTES || r->body.cap > SPARE_BUF_BYTES ||
        r->out.cap > SPARE_BUF_BYTES) {
        tn_http_req_destroy(r);
        return;
    }
    if (r->body.max_bytes != h->cfg.max_body_bytes) {
        /* Its cap was raised (body_cap): the next request starts from the
         * usual one, with no storage past it. */
        tn_buf_release(&r->body);
        r->body.max_bytes = h->cfg.max_body_bytes;
    }
    tn_buf_reset(&r->head);
    tn_buf_reset(&r->args);
    tn_buf_reset(&r->body);
    tn_buf_reset(&r->out);
    r->next_spare = h->spare;
    h->spare = r;
    h->n_spare++;
}

bool tn_http_same_name(const char *a, const char *b)
{
    return (a[0] | 0x20) == (b[0] | 0x20) && strcasecmp(a, b) == 0;
}

/* ---- what the application reads and sets ---- */

enum tn_http_method tn_http_req_method(const struct tn_http_req *r)
{
    return r->method;
}

const char *tn_http_req_path(const struct tn_http_req *r)
{
    return r->head.data != NULL ? r->head.data : "";
}

int tn_http_req_error(const struct tn_http_req *r)
{
    return r->error;
}

const char *tn_http_req_error_message(const struct tn_http_req *r)
{
    return r->error_msg != NULL ? r->error_msg : "";
}

const char *tn_http_req_header(const struct tn_http_req *r, const char *name)
{
    for (size_t i = 0; i < r->n_hdr; i++) {
        if (tn_http_same_name(r->head.data + r->hdr[i][0], name))
            return r->head.data + r->hdr[i][1];
    }
    return NULL;
}

const char *tn_http_req_body(const struct tn_http_req *r, size_t *len_out)
{
    *len_out = r->body.len;
    return r->body.data != NULL ? r->body.data : "";
}

bool tn_http_req_query_valid(struct tn_http_req *r)
{
    return r->args_ok;
}

const char *tn_http_req_query(struct tn_http_req *r, const char *key,
                              size_t *len_out)
{
    const char *p = r->args.data;
    if (p == NULL)
        return NULL;
    const char *end = p + r->args.len;
    while (p < end) {
        size_t kl = strlen(p);
        const char *v = p + kl + 1;
        size_t vl = strlen(v);
        if (strcmp(p, key) == 0) {
            *len_out = vl;
            return v;
        }
        p = v + vl + 1;
    }
    return NULL;
}

void tn_http_req_set_allow(struct tn_http_req *r, const char *methods)
{
    r->allow = methods;
}

void tn_http_req_set_fields(struct tn_http_req *r, const char *fields)
{
    r->fields = fields;
}

/* ---- the client behind it ---- */

const char *tn_http_req_peer(const struct tn_http_req *r)
{
    return r->c != NULL ? r->c->peer : "";
}

/* A half-closed HTTP/1.1 client is there until writing to it fails (it
 * was sent an interim answer to find out, out.c); an HTTP/1.0 one cannot
 * be asked, and its half-close counts as leaving. */
bool tn_http_req_is_connected(const struct tn_http_req *r)
{
    return r->c != NULL && !r->c->dead && !(r->http10 && r->c->rdhup);
}

void tn_http_req_on_disconnect(struct tn_http_req *r, tn_http_disconnect_fn fn,
                               void *ctx)
{
    r->on_disc = fn;
    r->disc_ctx = ctx;
}

int tn_http_req_peer_cn(const struct tn_http_req *r, char *out, size_t len)
{
    if (r->c == NULL || r->c->ssl == NULL || len == 0)
        return TN_EUNAUTH;
    return tn_tls_peer_cn(r->c->ssl, out, len);
}
