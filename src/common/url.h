/* SPDX-License-Identifier: MIT */
/* The one parser of addresses and URLs: tenured's --listen and the Host
 * and Origin it checks, the clients' server URLs, the CLI's --server and
 * TENURE_SERVER, and the Redis and Kafka URLs of the publisher and the
 * followers (redis_url.h, kafka_url.h) all go through it, so they agree on what
 * a host, a port, brackets and userinfo are.  Parses only: no DNS, no
 * allocation; the result points into the input.
 *
 *   host:port      a name ([A-Za-z0-9._~-], at most TN_URL_HOST_MAX bytes),
 *                  an IPv4 address, or an IPv6 address in brackets
 *                  ("[::1]", a zone allowed: "[fe80::1%eth0]"); an IPv6
 *                  address without brackets is refused (is "::1:80" a
 *                  port?); the port is 1 to 5 decimal digits, 1..65535
 *   URL            scheme://[user[:password]@]host[:port][/path][?query];
 *                  the userinfo ends at the last '@' before the path, so a
 *                  password may hold an '@'; user, password and path are
 *                  left percent-encoded (tn_url_decode) */
#ifndef TN_COMMON_URL_H
#define TN_COMMON_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TN_URL_HOST_MAX 255

enum tn_url_flags {
    TN_URL_NEED_PORT = 1u << 0, /* a missing port is an error */
    TN_URL_PORT_ZERO = 1u << 1, /* port 0 is allowed (a listener picks one) */
    TN_URL_HOST_LIST = 1u << 2, /* tn_url_parse: the host part is a comma-
                                   separated list of host[:port] (Kafka
                                   brokers); hp is the first of them */
};

/* One host and port; the strings point into the parsed input. */
struct tn_hostport {
    const char *host; /* a name or an address, without brackets */
    size_t host_len;  /* bytes, 1..TN_URL_HOST_MAX */
    uint16_t port;    /* as given, else the default passed in */
    bool has_port;    /* the input gave one */
    bool bracketed;   /* an IPv6 address, given in brackets */
};

/* A URL taken apart; every string points into the parsed input, and a
 * part the URL does not have is NULL with length 0. */
struct tn_url {
    const char *scheme;    /* before "://", not empty */
    size_t scheme_len;     /* bytes */
    const char *user;      /* userinfo before its first ':', or NULL */
    size_t user_len;       /* bytes, may be 0 ("@host", ":pw@host") */
    const char *password;  /* userinfo after its first ':', or NULL */
    size_t password_len;   /* bytes */
    const char *authority; /* what follows the userinfo up to the path:
                              host[:port], or the list */
    size_t authority_len;  /* bytes, not 0 */
    struct tn_hostport hp; /* the host and port (the first of a list) */
    const char *path;      /* from its '/' on, up to the query, or NULL */
    size_t path_len;       /* bytes */
    const char *query;     /* after the '?', or NULL */
    size_t query_len;      /* bytes, may be 0 */
};

/* Parse s[0..len) as host[:port] (see the top of this file), with
 * def_port when no port is given.  0 and *out, or TN_EINVAL (*out then
 * undefined). */
int tn_url_parse_hostport(const char *s, size_t len, uint16_t def_port,
                          unsigned flags, struct tn_hostport *out);

/* Parse s[0..len) as a URL (see the top of this file), with def_port
 * when no port is given.  0 and *out, or TN_EINVAL. */
int tn_url_parse(const char *s, size_t len, uint16_t def_port, unsigned flags,
                 struct tn_url *out);

/* True if u's scheme is exactly scheme (NUL-terminated, case-sensitive). */
bool tn_url_is_scheme(const struct tn_url *u, const char *scheme);

/* Whether s[0..len) holds no byte below 0x20 and no DEL: a URL, or a
 * decoded part of one, with such a byte is garbage, and would go on into
 * a request line or a log line as it is. */
bool tn_url_is_clean(const char *s, size_t len);

/* Percent-decode s[0..n) into out (cap bytes, NUL-terminated).  0, or
 * TN_EINVAL for a '%' not followed by two hex digits, an encoded NUL, or
 * a result that does not fit. */
int tn_url_decode(const char *s, size_t n, char *out, size_t cap);

/* Copy hp's host, NUL-terminated, into out (cap bytes): 0 or TN_EINVAL
 * when it does not fit. */
int tn_url_host_copy(const struct tn_hostport *hp, char *out, size_t cap);

#endif
