/* SPDX-License-Identifier: MIT */
/* Redis stream URLs (redis_url.h), on url.c's parser. */
#include "redis_url.h"

#include <string.h>

#include <tenure/err.h>

/* The query of a rediss:// URL: tls_KEY=VALUE&... (not decoded). */
static int parse_query(struct tn_tcp_tls *tls, const char *q, size_t n)
{
    char buf[1024];
    if (n >= sizeof(buf))
        return TN_EINVAL;
    memcpy(buf, q, n);
    buf[n] = '\0';
    for (char *save = NULL, *kv = strtok_r(buf, "&", &save); kv != NULL;
         kv = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(kv, '=');
        if (eq == NULL || !tls->on)
            return TN_EINVAL;
        *eq = '\0';
        if (tn_tcp_tls_set(tls, kv, eq + 1) < 0)
            return TN_EINVAL;
    }
    return TN_OK;
}

/* "/[DB/]STREAM" */
static int parse_path(struct tn_redis_url *r, const char *p, size_t n)
{
    if (n < 2 || p[0] != '/')
        return TN_EINVAL;
    p++;
    n--;
    const char *slash = memchr(p, '/', n);
    r->db = -1;
    if (slash != NULL) {
        size_t dn = (size_t)(slash - p);
        long db = 0;
        for (size_t i = 0; i < dn; i++) {
            if (p[i] < '0' || p[i] > '9' || dn > 6)
                return TN_EINVAL;
            db = db * 10 + (p[i] - '0');
        }
        if (dn == 0 || db > 100000)
            return TN_EINVAL;
        r->db = (int)db;
        n -= dn + 1;
        p = slash + 1;
    }
    if (n == 0)
        return TN_EINVAL;
    return tn_url_decode(p, n, r->stream, sizeof(r->stream));
}

/* user and password, decoded; a lone userinfo is the password. */
static int parse_auth(struct tn_redis_url *r, const struct tn_url *u)
{
    if (u->user == NULL)
        return TN_OK;
    if (u->password == NULL)
        return tn_url_decode(u->user, u->user_len, r->password,
                             sizeof(r->password));
    int rc = tn_url_decode(u->user, u->user_len, r->user, sizeof(r->user));
    if (rc == 0)
        rc = tn_url_decode(u->password, u->password_len, r->password,
                           sizeof(r->password));
    return rc;
}

int tn_redis_url_parse(const char *url, struct tn_redis_url *out)
{
    memset(out, 0, sizeof(*out));
    struct tn_url u;
    int rc = tn_url_parse(url, strlen(url), TN_REDIS_PORT, 0, &u);
    if (rc < 0)
        return rc;
    out->tls.on = tn_url_is_scheme(&u, "rediss");
    if (!out->tls.on && !tn_url_is_scheme(&u, "redis"))
        return TN_EINVAL;
    rc = tn_url_host_copy(&u.hp, out->host, sizeof(out->host));
    out->port = u.hp.port;
    if (rc == 0)
        rc = parse_auth(out, &u);
    if (rc == 0)
        rc = parse_path(out, u.path, u.path_len);
    if (rc == 0 && u.query != NULL)
        rc = parse_query(&out->tls, u.query, u.query_len);
    return rc;
}
