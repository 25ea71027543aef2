/* SPDX-License-Identifier: MIT */
/* Requests, as libhttp-parser hands them over: the head (target and header
 * fields) is copied into one capped buffer, the body into another, the
 * query decoded once into a third that stays put until the reply.  What
 * the parser refuses, and what it lets through but a strict server must
 * not (a transfer coding other than chunked, control bytes in the target,
 * oversized parts), becomes a refused request with its reason: never a
 * guess, never a silent truncation. */
#include <limits.h>
#include <string.h>
#include <strings.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/rand.h"
#include "common/url.h"
#include "http_int.h"

static struct tn_http_req *req_of(http_parser *p)
{
    struct conn *c = p->data;
    return c->cur;
}

/* Refuse the request being parsed: the parser stops at this callback. */
static int refuse(struct tn_http_req *r, int err, const char *msg)
{
    if (r->error == 0) {
        r->error = err;
        r->error_msg = msg;
    }
    return -1;
}

static int on_message_begin(http_parser *p)
{
    struct conn *c = p->data;
    if (c->cur == NULL && (c->cur = tn_http_req_new(c->h, c)) == NULL)
        return -1; /* out of memory: the connection is closed */
    return 0;
}

/* Close the part being written with a NUL, and start the next. */
static int next_part(struct tn_http_req *r, enum head_part part)
{
    if (r->part == part)
        return 0;
    if (r->part != PART_NONE && tn_buf_append(&r->head, "", 1) < 0)
        return -1;
    if (part == PART_FIELD) {
        if (r->n_hdr == TN_HTTP_MAX_HEADERS)
            return -1;
        r->hdr[r->n_hdr++][0] = r->head.len;
    } else if (part == PART_VALUE) {
        r->hdr[r->n_hdr - 1][1] = r->head.len;
    }
    r->part = part;
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t len)
{
    struct tn_http_req *r = req_of(p);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)at[i];
        if (ch <= 0x20 || ch == 0x7f)
            return refuse(r, TN_EINVAL, "control byte in the request target");
    }
    r->part = PART_URL;
    r->head_bytes += len;
    if (tn_buf_append(&r->head, at, len) < 0)
        return refuse(r, TN_EURITOOLONG, "request target too long");
    return 0;
}

/* The head's size as sent (request line, fields, their separators) is
 * what the header cap bounds, as clients and proxies count it. */
static bool head_fits(struct tn_http_req *r, size_t more)
{
    r->head_bytes += more;
    return r->head_bytes <= r->h->cfg.max_header_bytes;
}

static int on_header_field(http_parser *p, const char *at, size_t len)
{
    struct tn_http_req *r = req_of(p);
    /* "Content-Length : 5" is a smuggling vector: a proxy that does not
     * read it as Content-Length frames the body otherwise (RFC 9112 5.1). */
    if (memchr(at, ' ', len) != NULL || memchr(at, '\t', len) != NULL)
        return refuse(r, TN_EINVAL, "whitespace in a header field name");
    size_t sep = r->part != PART_FIELD ? 4 : 0; /* ": " and CRLF */
    if (!head_fits(r, len + sep) || next_part(r, PART_FIELD) < 0 ||
        tn_buf_append(&r->head, at, len) < 0)
        return refuse(r, TN_EHDRTOOBIG, "request header fields too large");
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len)
{
    struct tn_http_req *r = req_of(p);
    if (!head_fits(r, len) || next_part(r, PART_VALUE) < 0 ||
        tn_buf_append(&r->head, at, len) < 0)
        return refuse(r, TN_EHDRTOOBIG, "request header fields too large");
    return 0;
}

static enum tn_http_method method_of(unsigned m)
{
    switch (m) {
    case HTTP_GET:
        return TN_HTTP_GET;
    case HTTP_HEAD:
        return TN_HTTP_HEAD;
    case HTTP_POST:
        return TN_HTTP_POST;
    case HTTP_PUT:
        return TN_HTTP_PUT;
    case HTTP_PATCH:
        return TN_HTTP_PATCH;
    case HTTP_DELETE:
        return TN_HTTP_DELETE;
    default:
        return TN_HTTP_OTHER;
    }
}

/* "chunked", the one transfer coding served, with optional spaces. */
static bool is_chunked(const char *v)
{
    v += strspn(v, " \t");
    size_t n = strcspn(v, " \t");
    return n == 7 && strncasecmp(v, "chunked", 7) == 0 &&
           v[n + strspn(v + n, " \t")] == '\0';
}

static int check_codings(struct tn_http_req *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_hdr; i++) {
        if (!tn_http_same_name(r->head.data + r->hdr[i][0],
                               "Transfer-Encoding"))
            continue;
        if (++n > 1 || !is_chunked(r->head.data + r->hdr[i][1]))
            return refuse(r, TN_ENOTIMPL,
                          "only the chunked transfer coding is supported");
    }
    return 0;
}

/* Decode one "key=value" of the query into r->args. */
static int add_arg(struct tn_http_req *r, const char *s, size_t len)
{
    size_t klen = strcspn(s, "=");
    if (klen > len)
        klen = len;
    const char *v = klen < len ? s + klen + 1 : s + len;
    size_t vlen = klen < len ? len - klen - 1 : 0;
    if (vlen > TN_HTTP_QUERY_VALUE_MAX * 3 || klen > TN_HTTP_QUERY_VALUE_MAX)
        return refuse(r, TN_EURITOOLONG, "query value too long");
    char key[TN_HTTP_QUERY_VALUE_MAX + 1];
    char val[TN_HTTP_QUERY_VALUE_MAX * 3 + 1];
    long kn = tn_http_pct_decode(s, klen, true, key);
    long vn = tn_http_pct_decode(v, vlen, true, val);
    if (vn > TN_HTTP_QUERY_VALUE_MAX)
        return refuse(r, TN_EURITOOLONG, "query value too long");
    if (kn < 0 || vn < 0)
        return -1; /* a bad escape: the application says 400 */
    /* A NUL would cut a key or value short, and no argument takes a
     * control byte: refused as one in the target is, never truncated. */
    if (!tn_url_is_clean(key, (size_t)kn) || !tn_url_is_clean(val, (size_t)vn))
        return refuse(r, TN_EINVAL,
                      "control byte or NUL in a decoded query argument");
    size_t mark = r->args.len;
    if (tn_buf_append(&r->args, key, (size_t)kn + 1) < 0 ||
        tn_buf_append(&r->args, val, (size_t)vn + 1) < 0) {
        r->args.len = mark;
        return -1;
    }
    return 0;
}

/* Split the target at '?' and decode every query argument once, into
 * storage that stays put until the reply. */
static int split_query(struct tn_http_req *r)
{
    char *q = strchr(r->head.data, '?');
    r->args_ok = true;
    if (q == NULL)
        return 0;
    *q = '\0';
    r->query_off = (size_t)(q + 1 - r->head.data);
    const char *s = q + 1;
    while (*s != '\0') {
        size_t n = strcspn(s, "&");
        if (n > 0 && add_arg(r, s, n) < 0) {
            if (r->error != 0)
                return -1;
            r->args_ok = false; /* bad escape: the application says 400 */
        }
        s += n + (s[n] == '&');
    }
    return 0;
}

/* The application's cap of r's body, once (cfg.body_cap); the cap of
 * r->body becomes the larger of it and max_body_bytes. */
static size_t raise_body_cap(struct tn_http_req *r)
{
    const struct tn_http_config *cfg = &r->h->cfg;
    if (!r->body_cap_asked && cfg->body_cap != NULL) {
        size_t cap = cfg->body_cap(cfg->app, r);
        if (cap > r->body.max_bytes)
            r->body.max_bytes = cap;
    }
    r->body_cap_asked = true;
    return r->body.max_bytes;
}

/* The browser checks of origin.c.  The Host check's answer is kept for
 * the connection's last Host: a client sends the same Host on every
 * request, and the check (splitting it, inet_pton, the allowed names)
 * cost about 400 instructions of each acquire (docs/PERFORMANCE.md,
 * "Budget per request"). */
static int check_site(struct conn *c, struct tn_http_req *r)
{
    const char *host = tn_http_req_header(r, "Host");
    size_t len = host != NULL ? strlen(host) : 0;
    bool passed =
        len > 0 && len == c->host_ok_len && memcmp(host, c->host_ok, len) == 0;
    const char *why = NULL;
    int site = tn_http_check_site(c->h, r->method, host, passed,
                                  tn_http_req_header(r, "Origin"), &why);
    if (site < 0) {
        c->h->st.cross_site++;
        return refuse(r, site, why); /* before auth, and the body unread */
    }
    if (!passed && len > 0 && len <= sizeof(c->host_ok)) {
        memcpy(c->host_ok, host, len);
        c->host_ok_len = (uint8_t)len;
    }
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    struct conn *c = p->data;
    struct tn_http_req *r = c->cur;
    if (r->head.len == 0 || r->part == PART_FIELD)
        return refuse(r, TN_EINVAL, "malformed request head");
    if (tn_buf_append(&r->head, "", 1) < 0)
        return refuse(r, TN_EHDRTOOBIG, "request header fields too large");
    r->part = PART_NONE;
    r->method = method_of(p->method);
    /* HTTP/0.9 (no version), 1.2 to 1.9 (issue #36: read as 1.1 before),
     * 2.0, 3.0, ... */
    if (p->http_major != 1 || p->http_minor > 1)
        return refuse(r, TN_EHTTPVERSION,
                      "only HTTP/1.1 and HTTP/1.0 are supported");
    r->http10 = p->http_minor == 0;
    if (check_codings(r) < 0 || split_query(r) < 0)
        return -1;
    if (check_site(c, r) < 0)
        return -1;
    bool chunked = (p->flags & F_CHUNKED) != 0;
    if (!chunked && p->content_length != ULLONG_MAX &&
        p->content_length > c->h->cfg.max_body_bytes &&
        p->content_length > raise_body_cap(r))
        return refuse(r, TN_ETOOBIG, "request body too large");
    bool body =
        chunked || (p->content_length != ULLONG_MAX && p->content_length > 0);
    if (body && !tn_http_conn_app_headers(c, r))
        return -1; /* answered at the headers; the body stays unread */
    const char *expect = tn_http_req_header(r, "Expect");
    if (body && expect != NULL && strcasecmp(expect, "100-continue") == 0 &&
        c->n_queued == 0)
        tn_http_conn_continue(c);
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t len)
{
    struct tn_http_req *r = req_of(p);
    int rc = tn_buf_append(&r->body, at, len);
    if (rc == TN_ETOOBIG && !r->body_cap_asked) {
        (void)raise_body_cap(r); /* a chunked body past the usual cap */
        rc = tn_buf_append(&r->body, at, len);
    }
    if (rc < 0)
        return refuse(r, TN_ETOOBIG, "request body too large");
    return 0;
}

static int on_message_complete(http_parser *p)
{
    struct conn *c = p->data;
    struct tn_http_req *r = c->cur;
    r->keep_alive = http_should_keep_alive(p) != 0 && !p->upgrade;
    c->cur = NULL;
    tn_http_conn_dispatch(c, r);
    http_parser_pause(p, 1); /* one request at a time: the caller goes on */
    return 0;
}

void tn_http_parse_settings(http_parser_settings *ps)
{
    memset(ps, 0, sizeof(*ps));
    ps->on_message_begin = on_message_begin;
    ps->on_url = on_url;
    ps->on_header_field = on_header_field;
    ps->on_header_value = on_header_value;
    ps->on_headers_complete = on_headers_complete;
    ps->on_body = on_body;
    ps->on_message_complete = on_message_complete;
}

/* The parser's own refusals, as the documented errors. */
static void refuse_parser(struct tn_http_req *r, enum http_errno e)
{
    switch (e) {
    case HPE_UNEXPECTED_CONTENT_LENGTH:
        (void)refuse(r, TN_EINVAL,
                     "Content-Length repeated or with Transfer-Encoding");
        break;
    case HPE_INVALID_TRANSFER_ENCODING:
        (void)refuse(r, TN_ENOTIMPL,
                     "only the chunked transfer coding is supported");
        break;
    case HPE_HEADER_OVERFLOW:
        (void)refuse(r, TN_EHDRTOOBIG, "request header fields too large");
        break;
    case HPE_INVALID_CONTENT_LENGTH:
        (void)refuse(r, TN_EINVAL, "invalid Content-Length");
        break;
    default:
        (void)refuse(r, TN_EINVAL, "malformed HTTP request");
        break;
    }
}

/* The parser stopped at an error: answer it, read no more.  TN_ENOMEM
 * when there is no request to answer it with. */
static int fail(struct conn *c)
{
    enum http_errno e = HTTP_PARSER_ERRNO(&c->p);
    struct tn_http_req *r = c->cur;
    if (r == NULL && c->stop_reading)
        return TN_OK; /* answered at the headers: the queue holds it */
    c->stop_reading = true;
    c->cur = NULL;
    if (r == NULL && (r = tn_http_req_new(c->h, c)) == NULL)
        return TN_ENOMEM;
    if (r->error == 0)
        refuse_parser(r, e);
    c->h->st.protocol_errors++;
    r->keep_alive = false;
    tn_http_conn_dispatch(c, r);
    return TN_OK;
}

void tn_http_conn_cut_short(struct conn *c)
{
    struct tn_http_req *r = c->cur;
    c->cur = NULL;
    c->stop_reading = true;
    (void)refuse(r, TN_EINVAL, "request cut short by the end of the input");
    c->h->st.protocol_errors++;
    r->keep_alive = false;
    tn_http_conn_dispatch(c, r);
}

long tn_http_conn_feed(struct conn *c, const char *p, size_t len)
{
    if (HTTP_PARSER_ERRNO(&c->p) == HPE_PAUSED)
        http_parser_pause(&c->p, 0);
    size_t n = http_parser_execute(&c->p, &c->h->ps, p, len);
    enum http_errno e = HTTP_PARSER_ERRNO(&c->p);
    if (c->dead)
        return (long)len;
    if (e != HPE_OK && e != HPE_PAUSED)
        return fail(c) < 0 ? TN_ENOMEM : (long)len;
    if (c->p.upgrade) {
        c->stop_reading = true; /* no protocol switch is offered */
        return (long)len;
    }
    return (long)n;
}

long tn_http_pct_decode(const char *s, size_t len, bool form, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '%') {
            out[o++] = form && s[i] == '+' ? ' ' : s[i];
            continue;
        }
        int hi = i + 1 < len ? tn_hex_digit(s[i + 1]) : -1;
        int lo = i + 2 < len ? tn_hex_digit(s[i + 2]) : -1;
        if (hi < 0 || lo < 0)
            return -1;
        out[o++] = (char)(hi << 4 | lo);
        i += 2;
    }
    out[o] = '\0';
    return (long)o;
}
