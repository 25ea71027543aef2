/* SPDX-License-Identifier: MIT */
/* The client's HTTP transport over one reused libcurl easy handle.  It
 * knows URLs, timeouts and failover, nothing of leases.  A request moves to
 * the next URL when nothing was sent (no connection) or on a 503; never
 * after it was sent and no answer came.  A 503 does not prove that nothing
 * was done (a PostgreSQL commit may land before its connection breaks), so
 * what is sent again must be safe to repeat: renew and release are
 * conditional on (token, secret), and every acquire carries a request_id
 * (src/client/client.c).  Every attempt is bounded by the caller's
 * monotonic deadline. */
#include <string.h>

#include <tenure/err.h>

#include "client/client_internal.h"
#include "common/alloc.h"
#include "common/buf.h"

int tn_client_http_init(struct tn_client_http *h,
                        const struct tn_client_options *o,
                        const char *auth_header, const atomic_bool *abort_flag,
                        int64_t (*now_ms)(void))
{
    memset(h, 0, sizeof(*h));
    h->auth_header = auth_header;
    h->ca_file = o->ca_file;
    h->cert_file = o->cert_file;
    h->key_file = o->key_file;
    h->connect_timeout_ms = o->connect_timeout_ms;
    h->abort_flag = abort_flag;
    h->now_ms = now_ms;
    for (size_t i = 0; i < o->n_urls; i++) {
        size_t len = strlen(o->urls[i]);
        while (len > 0 && o->urls[i][len - 1] == '/')
            len--;
        h->urls[i] = tn_strndup(o->urls[i], len);
        if (h->urls[i] == NULL) {
            tn_client_http_release(h);
            return TN_ENOMEM;
        }
        h->n_urls = i + 1;
    }
    h->easy = curl_easy_init();
    if (h->easy == NULL) {
        tn_client_http_release(h);
        return TN_ENOMEM;
    }
    return TN_OK;
}

void tn_client_http_release(struct tn_client_http *h)
{
    if (h->easy != NULL)
        curl_easy_cleanup(h->easy);
    for (size_t i = 0; i < h->n_urls; i++)
        tn_free(h->urls[i]);
    memset(h, 0, sizeof(*h));
}

void tn_client_http_resp_release(struct tn_client_http_resp *r)
{
    tn_free(r->body);
    memset(r, 0, sizeof(*r));
}

char *tn_client_http_escape(const char *s)
{
    char *e = curl_easy_escape(NULL, s, (int)strlen(s));
    if (e == NULL)
        return NULL;
    char *copy = tn_strdup(e);
    curl_free(e);
    return copy;
}

char *tn_client_lease_path(const char *name, const char *suffix)
{
    char *esc = tn_client_http_escape(name);
    if (esc == NULL)
        return NULL;
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    int rc = tn_buf_printf(&b, "/v1/leases/%s%s", esc, suffix);
    tn_free(esc);
    if (rc < 0) {
        tn_buf_release(&b);
        return NULL;
    }
    return b.data;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct tn_buf *b = ud;
    if (tn_buf_append(b, p, size * n) < 0)
        return 0; /* over the cap: curl fails with CURLE_WRITE_ERROR */
    return size * n;
}

static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut,
                       curl_off_t un)
{
    (void)dt;
    (void)dn;
    (void)ut;
    (void)un;
    const atomic_bool *abort_flag = ud;
    return abort_flag != NULL && atomic_load(abort_flag) ? 1 : 0;
}

void tn_client_http_setup(CURL *e, const struct tn_client_http *h,
                          const struct tn_client_http_attempt *a)
{
    curl_easy_reset(e); /* keeps the connection cache */
    (void)curl_easy_setopt(e, CURLOPT_URL, a->url);
    if (h->ca_file != NULL)
        (void)curl_easy_setopt(e, CURLOPT_CAINFO, h->ca_file);
    if (h->cert_file != NULL)
        (void)curl_easy_setopt(e, CURLOPT_SSLCERT, h->cert_file);
    if (h->key_file != NULL)
        (void)curl_easy_setopt(e, CURLOPT_SSLKEY, h->key_file);
    (void)curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, a->method);
    (void)curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    (void)curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    (void)curl_easy_setopt(e, CURLOPT_HTTPHEADER, a->hdrs);
    (void)curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)a->timeout_ms);
    (void)curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)a->connect_ms);
    (void)curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    (void)curl_easy_setopt(e, CURLOPT_WRITEDATA, a->out);
    (void)curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    (void)curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, on_progress);
    (void)curl_easy_setopt(e, CURLOPT_XFERINFODATA, (void *)h->abort_flag);
    if (a->body != NULL) {
        (void)curl_easy_setopt(e, CURLOPT_POSTFIELDS, a->body);
        (void)curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)strlen(a->body));
    } else if (strcmp(a->method, "GET") == 0) {
        (void)curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    }
}

struct curl_slist *tn_client_http_headers(const struct tn_client_http *h,
                                          bool has_body)
{
    struct curl_slist *l = curl_slist_append(NULL, "Expect:");
    if (l != NULL && has_body) {
        struct curl_slist *n =
            curl_slist_append(l, "Content-Type: application/json");
        if (n == NULL)
            goto out_fail;
        l = n;
    }
    if (l != NULL && h->auth_header != NULL) {
        struct curl_slist *n = curl_slist_append(l, h->auth_header);
        if (n == NULL)
            goto out_fail;
        l = n;
    }
    return l;
out_fail:
    curl_slist_free_all(l);
    return NULL;
}

/* True when curl never sent anything for this attempt: safe to retry on
 * another URL. */
static bool not_sent(CURL *e, CURLcode cc)
{
    if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
        cc == CURLE_COULDNT_RESOLVE_PROXY)
        return true;
    curl_off_t pre = 0;
    if (curl_easy_getinfo(e, CURLINFO_PRETRANSFER_TIME_T, &pre) != CURLE_OK)
        return false;
    return cc == CURLE_OPERATION_TIMEDOUT && pre == 0;
}

int tn_client_http_map_curl(CURL *e, CURLcode cc)
{
    if (cc == CURLE_ABORTED_BY_CALLBACK)
        return TN_ECANCELED;
    if (cc == CURLE_WRITE_ERROR)
        return TN_ETOOBIG;
    if (not_sent(e, cc))
        return TN_ECONNECT;
    if (cc == CURLE_OPERATION_TIMEDOUT)
        return TN_ETIMEDOUT;
    return TN_EIO;
}

/* One attempt against URL i.  0 with out filled, or a negative code. */
static int attempt_one(struct tn_client_http *h, size_t i,
                       struct tn_client_http_attempt *a,
                       struct tn_client_http_resp *out, struct tn_errmsg *em)
{
    struct tn_buf url;
    tn_buf_init(&url, 8192);
    int rc = tn_buf_printf(&url, "%s%s", h->urls[i], a->path);
    if (rc < 0)
        goto out_url;
    a->url = url.data;
    tn_client_http_setup(h->easy, h, a);
    out->sent_ms = h->now_ms();
    CURLcode cc = curl_easy_perform(h->easy);
    if (cc != CURLE_OK) {
        rc = tn_client_http_map_curl(h->easy, cc);
        tn_errmsg_set(em, "%s %s: %s", a->method, h->urls[i],
                      curl_easy_strerror(cc));
        goto out_url;
    }
    (void)curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &out->status);
out_url:
    tn_buf_release(&url);
    return rc;
}

static int take_body(struct tn_buf *b, struct tn_client_http_resp *out)
{
    out->body_len = b->len;
    out->body = tn_strndup(b->data != NULL ? b->data : "", b->len);
    return out->body != NULL ? TN_OK : TN_ENOMEM;
}

/* Try the URLs in turn, starting with the preferred one. */
static int try_urls(struct tn_client_http *h, struct tn_client_http_attempt *a,
                    int64_t deadline_ms, struct tn_client_http_resp *out,
                    struct tn_errmsg *em)
{
    int rc = TN_ECONNECT;
    for (size_t k = 0; k < h->n_urls; k++) {
        size_t i = (h->preferred + k) % h->n_urls;
        int64_t left = deadline_ms - h->now_ms();
        if (left <= 0) {
            tn_errmsg_set(em, "%s %s: deadline passed", a->method, a->path);
            return TN_ETIMEDOUT;
        }
        a->timeout_ms = left;
        a->connect_ms =
            h->connect_timeout_ms < left ? h->connect_timeout_ms : left;
        tn_buf_reset(a->out);
        rc = attempt_one(h, i, a, out, em);
        bool last = k + 1 == h->n_urls;
        if (rc == TN_ECONNECT || (rc == 0 && out->status == 503 && !last))
            continue;
        if (rc == 0)
            h->preferred = i;
        return rc;
    }
    return rc;
}

int tn_client_http_do(struct tn_client_http *h,
                      const struct tn_client_http_req *req,
                      struct tn_client_http_resp *out, struct tn_errmsg *em)
{
    memset(out, 0, sizeof(*out));
    struct tn_buf resp;
    tn_buf_init(&resp, TN_CLIENT_BODY_MAX);
    struct tn_client_http_attempt a = {
        .method = req->method, .path = req->path, .body = req->body};
    a.out = &resp;
    a.hdrs = tn_client_http_headers(h, req->body != NULL);
    if (a.hdrs == NULL)
        return TN_ENOMEM;
    int rc = try_urls(h, &a, req->deadline_ms, out, em);
    if (rc == 0)
        rc = take_body(&resp, out);
    tn_buf_release(&resp);
    curl_slist_free_all(a.hdrs);
    return rc;
}
