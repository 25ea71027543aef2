/* SPDX-License-Identifier: MIT */
/* Hosts, ports and URLs taken apart (url.h).  Strict on purpose: a
 * listener, a client and a publisher that read one spelling three ways
 * would bind, connect or check three different things. */
#include "url.h"

#include <arpa/inet.h>
#include <string.h>

#include <tenure/err.h>

#include "rand.h"

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A host name, or an IPv4 address (which is spelled as one). */
static bool is_name(const char *s, size_t n)
{
    if (n == 0 || n > TN_URL_HOST_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!is_alpha(c) && !is_digit(c) && c != '.' && c != '-' && c != '_' &&
            c != '~')
            return false;
    }
    return true;
}

/* What is inside the brackets: an IPv6 address, then maybe "%zone". */
static bool is_v6(const char *s, size_t n)
{
    const char *pct = memchr(s, '%', n);
    size_t an = pct != NULL ? (size_t)(pct - s) : n;
    char buf[INET6_ADDRSTRLEN];
    unsigned char addr[16];
    if (an == 0 || an >= sizeof(buf) || n > TN_URL_HOST_MAX)
        return false;
    memcpy(buf, s, an);
    buf[an] = '\0';
    if (inet_pton(AF_INET6, buf, addr) != 1)
        return false;
    return pct == NULL || is_name(pct + 1, n - an - 1);
}

/* 1 to 5 decimal digits, 1..65535 (0 too with TN_URL_PORT_ZERO): no sign,
 * no space, no name of a service. */
static bool parse_port(const char *s, size_t n, unsigned flags, uint16_t *out)
{
    if (n == 0 || n > 5)
        return false;
    unsigned long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]))
            return false;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v > 65535 || (v == 0 && !(flags & TN_URL_PORT_ZERO)))
        return false;
    *out = (uint16_t)v;
    return true;
}

int tn_url_parse_hostport(const char *s, size_t len, uint16_t def_port,
                          unsigned flags, struct tn_hostport *out)
{
    memset(out, 0, sizeof(*out));
    size_t spelled = 0; /* bytes of the host, brackets included */
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (close == NULL || !is_v6(s + 1, (size_t)(close - s) - 1))
            return TN_EINVAL;
        out->host = s + 1;
        out->host_len = (size_t)(close - s) - 1;
        out->bracketed = true;
        spelled = out->host_len + 2;
    } else {
        const char *colon = memchr(s, ':', len);
        spelled = colon != NULL ? (size_t)(colon - s) : len;
        if (!is_name(s, spelled))
            return TN_EINVAL;
        out->host = s;
        out->host_len = spelled;
    }
    out->port = def_port;
    if (spelled == len)
        return (flags & TN_URL_NEED_PORT) ? TN_EINVAL : TN_OK;
    if (s[spelled] != ':' ||
        !parse_port(s + spelled + 1, len - spelled - 1, flags, &out->port))
        return TN_EINVAL;
    out->has_port = true;
    return TN_OK;
}

/* [A-Za-z][A-Za-z0-9+.-]* (RFC 3986). */
static bool is_scheme(const char *s, size_t n)
{
    if (n == 0 || !is_alpha(s[0]))
        return false;
    for (size_t i = 1; i < n; i++) {
        if (!is_alpha(s[i]) && !is_digit(s[i]) && s[i] != '+' && s[i] != '-' &&
            s[i] != '.')
            return false;
    }
    return true;
}

/* The end of the scheme ("://"), or NULL. */
static const char *scheme_end(const char *s, size_t len)
{
    for (size_t i = 0; i + 3 <= len; i++) {
        if (s[i] == ':' && s[i + 1] == '/' && s[i + 2] == '/')
            return s + i;
        if (s[i] == '/' || s[i] == '?' || s[i] == '@')
            return NULL;
    }
    return NULL;
}

/* The host part, s[0..n): one host[:port], or with TN_URL_HOST_LIST a
 * comma-separated list of them. */
static int parse_hosts(struct tn_url *u, uint16_t def_port, unsigned flags)
{
    const char *s = u->authority;
    size_t n = u->authority_len;
    unsigned one = flags & ~(unsigned)TN_URL_HOST_LIST;
    if (!(flags & TN_URL_HOST_LIST))
        return tn_url_parse_hostport(s, n, def_port, one, &u->hp);
    const char *end = s + n;
    const char *p = s;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *e = comma != NULL ? comma : end;
        struct tn_hostport hp;
        int rc = tn_url_parse_hostport(p, (size_t)(e - p), def_port, one, &hp);
        if (rc < 0)
            return rc;
        if (p == s)
            u->hp = hp;
        if (comma == NULL)
            return TN_OK;
        p = comma + 1;
    }
}

/* userinfo s[0..n): user, then password after the first ':'. */
static void split_userinfo(struct tn_url *u, const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n);
    u->user = s;
    u->user_len = colon != NULL ? (size_t)(colon - s) : n;
    if (colon != NULL) {
        u->password = colon + 1;
        u->password_len = n - u->user_len - 1;
    }
}

bool tn_url_is_clean(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return false;
    }
    return true;
}

int tn_url_parse(const char *s, size_t len, uint16_t def_port, unsigned flags,
                 struct tn_url *out)
{
    memset(out, 0, sizeof(*out));
    const char *sep = scheme_end(s, len);
    if (!tn_url_is_clean(s, len) || sep == NULL ||
        !is_scheme(s, (size_t)(sep - s)))
        return TN_EINVAL;
    out->scheme = s;
    out->scheme_len = (size_t)(sep - s);
    const char *end = s + len;
    const char *a = sep + 3;
    const char *aend = a;
    while (aend < end && *aend != '/' && *aend != '?')
        aend++;
    for (const char *p = aend; p > a; p--) {
        if (p[-1] == '@') {
            split_userinfo(out, a, (size_t)(p - 1 - a));
            a = p;
            break;
        }
    }
    out->authority = a;
    out->authority_len = (size_t)(aend - a);
    int rc = parse_hosts(out, def_port, flags);
    if (rc < 0)
        return rc;
    const char *q = memchr(aend, '?', (size_t)(end - aend));
    if (aend < end && *aend == '/') {
        out->path = aend;
        out->path_len = (size_t)((q != NULL ? q : end) - aend);
    }
    if (q != NULL) {
        out->query = q + 1;
        out->query_len = (size_t)(end - q - 1);
    }
    return TN_OK;
}

bool tn_url_is_scheme(const struct tn_url *u, const char *scheme)
{
    size_t n = strlen(scheme);
    return u->scheme_len == n && memcmp(u->scheme, scheme, n) == 0;
}

int tn_url_decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            int hi = i + 2 < n ? tn_hex_digit(s[i + 1]) : -1;
            int lo = hi >= 0 ? tn_hex_digit(s[i + 2]) : -1;
            if (lo < 0 || (hi | lo) == 0)
                return TN_EINVAL;
            c = (char)(hi * 16 + lo);
            i += 2;
        }
        if (o + 1 >= cap)
            return TN_EINVAL;
        out[o++] = c;
    }
    if (cap == 0)
        return TN_EINVAL;
    out[o] = '\0';
    return TN_OK;
}

int tn_url_host_copy(const struct tn_hostport *hp, char *out, size_t cap)
{
    if (hp->host_len >= cap)
        return TN_EINVAL;
    memcpy(out, hp->host, hp->host_len);
    out[hp->host_len] = '\0';
    return TN_OK;
}
