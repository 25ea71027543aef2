/* SPDX-License-Identifier: MIT */
/* Fuzz target for the one parser of addresses and URLs (common/url.h) and
 * the stream URLs on it (redis_url.h, kafka_url.h).  The first byte picks
 * the flags, the rest is the input, given by length (not NUL-terminated,
 * so a read past its end is a sanitizer report).  Checked: whatever is
 * taken points inside the input; a host is 1..TN_URL_HOST_MAX bytes, with
 * no ':' unless it was in brackets; a port is in range and the default
 * when none was given; a path starts with '/', a query follows a '?';
 * decoding never grows and re-decodes its own encoding to itself; a Redis
 * or Kafka URL taken has a host, a port, a stream or topic. */
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "common/assert.h"
#include "common/kafka_url.h"
#include "common/redis_url.h"
#include "common/url.h"
#include "fuzz.h"

static bool inside(const char *p, size_t n, const char *s, size_t len)
{
    return p >= s && n <= len && (size_t)(p - s) <= len - n;
}

static void check_hostport(const struct tn_hostport *hp, const char *s,
                           size_t len, unsigned flags)
{
    TN_ASSERT(inside(hp->host, hp->host_len, s, len));
    TN_ASSERT(hp->host_len >= 1 && hp->host_len <= TN_URL_HOST_MAX);
    TN_ASSERT(hp->bracketed || memchr(hp->host, ':', hp->host_len) == NULL);
    TN_ASSERT(!hp->bracketed || (hp->host > s && hp->host[-1] == '['));
    TN_ASSERT(hp->has_port || hp->port == 7);
    TN_ASSERT(!(flags & TN_URL_NEED_PORT) || hp->has_port);
    TN_ASSERT(!hp->has_port || hp->port != 0 || (flags & TN_URL_PORT_ZERO));
}

static void check_url(const struct tn_url *u, const char *s, size_t len,
                      unsigned flags)
{
    TN_ASSERT(u->scheme == s && u->scheme_len > 0);
    TN_ASSERT(inside(u->authority, u->authority_len, s, len));
    TN_ASSERT(u->authority_len > 0);
    check_hostport(&u->hp, s, len, flags);
    TN_ASSERT(u->user == NULL || inside(u->user, u->user_len, s, len));
    TN_ASSERT(u->password == NULL ||
              inside(u->password, u->password_len, s, len));
    TN_ASSERT(u->path == NULL || (inside(u->path, u->path_len, s, len) &&
                                  u->path_len > 0 && u->path[0] == '/'));
    TN_ASSERT(u->query == NULL ||
              (inside(u->query, u->query_len, s, len) && u->query[-1] == '?'));
}

static void decode(const char *s, size_t len)
{
    char *out = malloc(len + 1);
    char *enc = malloc(3 * len + 1);
    char *back = malloc(len + 1);
    TN_ASSERT(out != NULL && enc != NULL && back != NULL);
    if (tn_url_decode(s, len, out, len + 1) == TN_OK) {
        size_t n = strlen(out);
        TN_ASSERT(n <= len);
        static const char hex[] = "0123456789abcdef";
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)out[i];
            enc[3 * i] = '%';
            enc[3 * i + 1] = hex[c >> 4];
            enc[3 * i + 2] = hex[c & 15];
        }
        TN_ASSERT(tn_url_decode(enc, 3 * n, back, len + 1) == TN_OK);
        TN_ASSERT(strcmp(out, back) == 0);
    }
    free(out);
    free(enc);
    free(back);
}

static void streams(const char *s, size_t len)
{
    char *z = malloc(len + 1);
    TN_ASSERT(z != NULL);
    memcpy(z, s, len);
    z[len] = '\0';
    struct tn_redis_url r;
    if (tn_redis_url_parse(z, &r) == TN_OK) {
        TN_ASSERT(r.host[0] != '\0' && r.port >= 1 && r.port <= 65535);
        TN_ASSERT(r.db >= -1 && r.db <= 100000 && r.stream[0] != '\0');
        TN_ASSERT(strnlen(r.user, sizeof(r.user)) < sizeof(r.user));
    }
    struct tn_kafka_url k;
    if (tn_kafka_url_parse(z, &k) == TN_OK)
        TN_ASSERT(k.brokers[0] != '\0' && k.topic[0] != '\0' &&
                  strchr(k.topic, '/') == NULL);
    free(z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned flags =
        data[0] & (TN_URL_NEED_PORT | TN_URL_PORT_ZERO | TN_URL_HOST_LIST);
    size_t len = size - 1;
    /* A copy of exactly len bytes: the sanitizers see any read past it. */
    char *s = malloc(len > 0 ? len : 1);
    TN_ASSERT(s != NULL);
    memcpy(s, data + 1, len);
    struct tn_hostport hp;
    if (tn_url_parse_hostport(s, len, 7, flags, &hp) == TN_OK)
        check_hostport(&hp, s, len, flags);
    struct tn_url u;
    if (tn_url_parse(s, len, 7, flags, &u) == TN_OK)
        check_url(&u, s, len, flags);
    decode(s, len);
    streams(s, len);
    free(s);
    return 0;
}
