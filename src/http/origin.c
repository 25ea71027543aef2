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

#include "common/url.h"
#include "http_int.h"

/* One "host[:port]" or "scheme://host[:port]", taken apart by the one
 * parser of addresses (common/url.h). */
struct site {
    const char *scheme;    /* "http", "https", or NULL: not an origin */
    size_t scheme_len;     /* bytes */
    struct tn_hostport hp; /* an IPv6 host without its brackets; port 0:
                              none given */
};

static bool same_text(const char *a, size_t alen, const char *b, size_t blen)
{
    return alen == blen && strncasecmp(a, b, alen) == 0;
}

/* s without the blanks a header value may end in. */
static size_t trimmed(const char *s)
{
    size_t len = strlen(s);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    return len;
}

/* "host" or "host:port", the value of a Host header. */
static bool split_host(const char *s, struct site *out)
{
    out->scheme = NULL;
    return tn_url_parse_hostport(s, trimmed(s), 0, 0, &out->hp) == 0;
}

/* An IPv4 address, or an IPv6 one (in brackets): no DNS name, so no page
 * can have it rebound to this server. */
static bool is_ip_literal(const struct tn_hostport *hp)
{
    char buf[INET_ADDRSTRLEN];
    unsigned char addr[sizeof(struct in_addr)];
    if (hp->bracketed)
        return true; /* the parser took it for an IPv6 address */
    if (hp->host_len >= sizeof(buf))
        return false;
    memcpy(buf, hp->host, hp->host_len);
    buf[hp->host_len] = '\0';
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
    struct tn_hostport hp;
    return l != NULL &&
           tn_url_parse_hostport(l, strlen(l), 0, TN_URL_PORT_ZERO, &hp) == 0 &&
           same_text(hp.host, hp.host_len, s, len);
}

static bool host_allowed(const struct tn_http *h, const struct site *s)
{
    const struct tn_hostport *hp = &s->hp;
    return is_ip_literal(hp) ||
           same_text(hp->host, hp->host_len, "localhost", 9) ||
           is_listen_host(h, hp->host, hp->host_len) ||
           listed(h->cfg.allow_hosts, hp->host, hp->host_len);
}

/* "scheme://host[:port]", as browsers send it (no user, no path). */
static bool split_origin(const char *o, struct site *out)
{
    struct tn_url u;
    if (tn_url_parse(o, trimmed(o), 0, 0, &u) < 0 || u.user != NULL ||
        u.path != NULL || u.query != NULL)
        return false;
    out->scheme = u.scheme;
    out->scheme_len = u.scheme_len;
    out->hp = u.hp;
    return true;
}

static unsigned port_or_default(const struct site *s, bool https)
{
    if (s->hp.port != 0)
        return s->hp.port;
    return https ? 443 : 80;
}

/* Whether origin is this server's own: its scheme, and the host and port
 * the request's Host names (which passed its own check). */
static bool is_own_origin(const struct tn_http *h, const char *origin,
                          const char *host)
{
    struct site o, self;
    bool https = h->tls != NULL;
    if (host == NULL || !split_origin(origin, &o) || !split_host(host, &self))
        return false;
    return same_text(o.scheme, o.scheme_len, https ? "https" : "http",
                     https ? 5 : 4) &&
           same_text(o.hp.host, o.hp.host_len, self.hp.host,
                     self.hp.host_len) &&
           port_or_default(&o, https) == port_or_default(&self, https);
}

int tn_http_check_site(const struct tn_http *h, enum tn_http_method method,
                       const char *host, bool host_passed, const char *origin,
                       const char **msg_out)
{
    struct site s;
    if (host != NULL && !host_passed && h->cfg.check_host &&
        (!split_host(host, &s) || !host_allowed(h, &s))) {
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
