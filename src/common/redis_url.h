/* SPDX-License-Identifier: MIT */
/* The URL of a Redis stream of lease events, read once for the
 * publisher's target (src/publish/redis.c) and the clients' follower
 * (src/client/events_redis.c), so that what `tenured --publish URL`
 * writes to is what a follower given the same URL reads.  On url.h; no
 * I/O. */
#ifndef TN_COMMON_REDIS_URL_H
#define TN_COMMON_REDIS_URL_H

#include "tcp.h"
#include "url.h"

#define TN_REDIS_PORT 6379

/* redis[s]://[USER[:PASSWORD]@]HOST[:PORT][/DB]/STREAM[?tls_KEY=VALUE&...] */
struct tn_redis_url {
    char host[TN_URL_HOST_MAX + 1]; /* to connect to, without brackets */
    int port;                       /* TN_REDIS_PORT when not given */
    int db;                         /* SELECT 0..100000, or -1: none */
    char stream[512];               /* the key, percent-decoded */
    char user[128];                 /* AUTH user, decoded, or "" */
    char password[256];             /* AUTH password, decoded, or "" */
    struct tn_tcp_tls tls;          /* on for rediss://, with the query's
                                       tls_KEY=VALUE (not decoded) */
};

/* Parse url (NUL-terminated) into *out.  A userinfo without ':' is the
 * password (redis://PASSWORD@HOST/..., as Redis clients read it); the
 * query is for rediss:// only and takes tn_tcp_tls_set's keys.  0 or
 * TN_EINVAL. */
int tn_redis_url_parse(const char *url, struct tn_redis_url *out);

#endif
