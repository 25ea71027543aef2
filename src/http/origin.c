/* SPDX-License-Identifier: MIT */
/* Which web pages may talk to tenured.  A browser lets any page send
 * requests to any server, with its cookies and client certificates: a
 * page elsewhere could acquire and release leases through a browser on
 * the server's machine (cross-site request forgery), and a page whose
 * name is made to resolve to 127.0.0.1 (DNS rebinding) could also read
 * the answers, as the browser takes them for its own.  Two checks, both
 * on what browsers send and other clients do not:
 *   - Host must name this server (a loopback name, an IP address, the
 *     listen host, or --allow-host), when authentication is off;
 *   - a request that changes state (any method but GET and HEAD) with an
 *     Origin must come from this server's own origin or --allow-origin.
 * A request without Host or Origin (curl, the clients) is not affected.
 * This file calls nothing of the front end: parse.c asks it. */
#include <arpa/inet.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "http_int.h"

/* One "host[:port]" or "scheme://host[:port]", taken apart. */
struct site {
    const char *scheme; /* "http", "https", or NULL: not an origin */
    size_t scheme_len;
    const char *host; /* a name, an IPv4 address or "[v6]" */
    size_t host_len;
    unsigned port; /* 0: none given */
};

static bool same_text(const char *a, size_t alen, const char *b, size_t blen)
{
    return alen == blen && strncasecmp(a, b, alen) == 0;
}

/* "host" or "host:port" (a port of 1-5 digits), s[0..len). */
static bool split_host(const char *s, size_t len, struct site *out)
{
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    size_t hl = len;
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (close == NULL)
            return false;
        hl = (size_t)(close - s) + 1;
    } else {
        const char *colon = memchr(s, ':', len);
        if (colon != NULL)
            hl = (size_t)(colon - s);
    }
    out->host = s;
    out->host_len = hl;
    out->port = 0;
    if (hl == 0 || (hl < len && s[hl] != ':'))
        return false;
    if (hl == len)
        return true;
    size_t digits = len - hl - 1;
    if (digits == 0 || digits > 5)
        return false;
    for (size_t i = hl + 1; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        out->port = out->port * 10 + (unsigned)(s[i] - '0');
    }
    return out->port > 0 && out->port <= 65535;
}

/* An IPv4 address, or an IPv6 one in brackets: no DNS name, so no page
 * can have it rebound to this server. */
static bool is_ip_literal(const char *h, size_t len)
{
    char buf[INET6_ADDRSTRLEN + 2];
    unsigned char addr[sizeof(struct in6_addr)];
    if (len < 2 || len >= sizeof(buf))
        return false;
    if (h[0] == '[' && h[len - 1] == ']') {
        memcpy(buf, h + 1, len - 2);
        buf[len - 2] = '\0';
        return inet_pton(AF_INET6, buf, addr) == 1;
    }
    memcpy(buf, h, len);
    buf[len] = '\0';
    return inet_pton(AF_INET, buf, addr) == 1;
}

/* Whether s[0..len) is one of the items of list: lines of
 * comma-separated values (as repeatable options give them), "*" any. */
static bool listed(const char *list, const char *s, size_t len)
{
    while (list != NULL && *list != '\0') {
        size_t n = strcspn(list, ",\n");
        const char *item = list;
        size_t il = n;
        while (il > 0 && (*item == ' ' || *item == '\t')) {
            item++;
            il--;
        }
        while (il > 0 && (item[il - 1] == ' ' || item[il - 1] == '\t'))
            il--;
        if ((il == 1 && item[0] == '*') || same_text(item, il, s, len))
            return true;
        list += n + (list[n] != '\0');
    }
    return false;
}

/* The host part of the listen address ("127.0.0.1:7300" -> "127.0.0.1"). */
static bool is_listen_host(const struct tn_http *h, const char *s, size_t len)
{
    const char *l = h->cfg.listen;
    const char *colon = l != NULL ? strrchr(l, ':') : NULL;
    return colon != NULL && same_text(l, (size_t)(colon - l), s, len);
}

static bool host_allowed(const struct tn_http *h, const struct site *s)
{
    return is_ip_literal(s->host, s->host_len) ||
           same_text(s->host, s->host_len, "localhost", 9) ||
           is_listen_host(h, s->host, s->host_len) ||
           listed(h->cfg.allow_hosts, s->host, s->host_len);
}

/* "scheme://host[:port]", as browsers send it (no path, no user). */
static bool split_origin(const char *o, struct site *out)
{
    const char *sep = strstr(o, "://");
    if (sep == NULL)
        return false;
    out->scheme = o;
    out->scheme_len = (size_t)(sep - o);
    const char *rest = sep + 3;
    return split_host(rest, strlen(rest), out);
}

static unsigned port_or_default(const struct site *s, bool https)
{
    if (s->port != 0)
        return s->port;
    return https ? 443 : 80;
}

/* Whether origin is this server's own: its scheme, and the host and port
 * the request's Host names (which passed its own check). */
static bool is_own_origin(const struct tn_http *h, const char *origin,
                          const char *host)
{
    struct site o, self;
    bool https = h->tls != NULL;
    if (host == NULL || !split_origin(origin, &o) ||
        !split_host(host, strlen(host), &self))
        return false;
    return same_text(o.scheme, o.scheme_len, https ? "https" : "http",
                     https ? 5 : 4) &&
           same_text(o.host, o.host_len, self.host, self.host_len) &&
           port_or_default(&o, https) == port_or_default(&self, https);
}

int tn_http_check_site(const struct tn_http *h, enum tn_http_method method,
                       const char *host, const char *origin,
                       const char **msg_out)
{
    struct site s;
    if (host != NULL && h->cfg.check_host &&
        (!split_host(host, strlen(host), &s) || !host_allowed(h, &s))) {
        *msg_out = "the Host header names no name of this server (DNS "
                   "rebinding?); allow the name with --allow-host";
        return TN_EMISDIRECTED;
    }
    if (origin == NULL || method == TN_HTTP_GET || method == TN_HTTP_HEAD ||
        is_own_origin(h, origin, host) ||
        listed(h->cfg.allow_origins, origin, strlen(origin)))
        return TN_OK;
    *msg_out = "a request that changes state from a web page of another "
               "origin is refused; allow its origin with --allow-origin";
    return TN_EFORBIDDEN;
}
