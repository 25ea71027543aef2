/* SPDX-License-Identifier: MIT */
/* The hosts of a PostgreSQL connection string (hosts.c), shared by every
 * link of a store (src/store/pg/link.c): the string parsed into one set of
 * libpq keywords per host, with the keepalive defaults the string does not
 * set, and what the links learnt of each host (where the last good
 * connection was, which host stalled, the counters of both).  Nothing here
 * does I/O. */
#include "store/pg/hosts.h"

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/clock.h"

/* Set on every connection unless the string says otherwise: an idle
 * connection to a machine that is gone is found within about 10 s, one
 * with unacknowledged data within 5 s. */
static const char *const defaults[][2] = {
    {"keepalives", "1"},          {"keepalives_idle", "5"},
    {"keepalives_interval", "1"}, {"keepalives_count", "3"},
    {"tcp_user_timeout", "5000"},
};
#define N_DEFAULTS (sizeof(defaults) / sizeof(defaults[0]))
/* host, hostaddr and port come first in keys/vals, set per host. */
#define N_PER_HOST 3

static bool per_host_key(const char *k)
{
    return strcmp(k, "host") == 0 || strcmp(k, "hostaddr") == 0 ||
           strcmp(k, "port") == 0;
}

/* Split the comma-separated list s (owned storage) in place into out
 * (cap entries); the number of items. */
static size_t split(char *s, char **out, size_t cap)
{
    size_t n = 0;
    if (s == NULL)
        return 0;
    for (char *p = s;; p++) {
        if (n < cap)
            out[n] = p;
        n++;
        p = strchr(p, ',');
        if (p == NULL)
            break;
        *p = '\0';
    }
    return n;
}

static size_t count_items(const char *s)
{
    size_t n = s != NULL ? 1 : 0;
    for (; s != NULL && *s != '\0'; s++)
        n += *s == ',';
    return n;
}

/* Copy s into the arena at *at; advances *at. */
static char *keep(char **at, const char *s)
{
    size_t len = strlen(s) + 1;
    char *out = *at;
    memcpy(out, s, len);
    *at += len;
    return out;
}

static bool has_key(const PQconninfoOption *o, const char *k)
{
    for (; o->keyword != NULL; o++) {
        if (o->val != NULL && strcmp(o->keyword, k) == 0)
            return true;
    }
    return false;
}

static const char *value_of(const PQconninfoOption *o, const char *k)
{
    for (; o->keyword != NULL; o++) {
        if (o->val != NULL && strcmp(o->keyword, k) == 0)
            return o->val;
    }
    return NULL;
}

/* Room for every keyword and value of o and the defaults. */
static size_t arena_bytes(const PQconninfoOption *o, size_t *n_keys)
{
    size_t bytes = 1;
    *n_keys = N_PER_HOST + N_DEFAULTS;
    for (; o->keyword != NULL; o++) {
        if (o->val != NULL) {
            bytes += strlen(o->keyword) + strlen(o->val) + 2;
            ++*n_keys;
        }
    }
    for (size_t i = 0; i < N_DEFAULTS; i++)
        bytes += strlen(defaults[i][0]) + strlen(defaults[i][1]) + 2;
    return bytes + 32;
}

/* The host lists of o, split into h (allocated). */
static int split_hosts(struct tn_pg_hosts *h, const PQconninfoOption *o,
                       char **at, char *err, size_t cap)
{
    const char *hs = value_of(o, "host");
    const char *ha = value_of(o, "hostaddr");
    const char *ps = value_of(o, "port");
    size_t nh = count_items(hs), na = count_items(ha), np = count_items(ps);
    h->n = nh > na ? nh : na;
    if (h->n == 0)
        h->n = 1;
    if (h->n > TN_PG_MAX_HOSTS) {
        (void)snprintf(err, cap, "more than %d hosts in the connection string",
                       TN_PG_MAX_HOSTS);
        return TN_EINVAL;
    }
    if ((nh > 0 && na > 0 && nh != na) || (np > 1 && np != h->n)) {
        (void)snprintf(err, cap,
                       "the connection string's host, hostaddr "
                       "and port lists differ in length");
        return TN_EINVAL;
    }
    h->host = tn_calloc(h->n, sizeof(*h->host));
    h->hostaddr = tn_calloc(h->n, sizeof(*h->hostaddr));
    h->port = tn_calloc(h->n, sizeof(*h->port));
    h->suspect_ms = tn_calloc(h->n, sizeof(*h->suspect_ms));
    if (h->host == NULL || h->hostaddr == NULL || h->port == NULL ||
        h->suspect_ms == NULL)
        return TN_ENOMEM;
    (void)split(hs != NULL ? keep(at, hs) : NULL, h->host, h->n);
    (void)split(ha != NULL ? keep(at, ha) : NULL, h->hostaddr, h->n);
    (void)split(ps != NULL ? keep(at, ps) : NULL, h->port, h->n);
    for (size_t i = 1; np == 1 && i < h->n; i++)
        h->port[i] = h->port[0];
    return TN_OK;
}

/* keys/vals: the three per-host slots, every other option of o, then the
 * defaults o does not set. */
static void fill_keys(struct tn_pg_hosts *h, const PQconninfoOption *o,
                      char **at)
{
    size_t k = 0;
    h->keys[k++] = "host";
    h->keys[k++] = "hostaddr";
    h->keys[k++] = "port";
    for (const PQconninfoOption *p = o; p->keyword != NULL; p++) {
        if (p->val == NULL || per_host_key(p->keyword))
            continue;
        h->keys[k] = keep(at, p->keyword);
        h->vals[k++] = keep(at, p->val);
    }
    for (size_t i = 0; i < N_DEFAULTS; i++) {
        if (!has_key(o, defaults[i][0])) {
            h->keys[k] = defaults[i][0];
            h->vals[k++] = defaults[i][1];
        }
    }
    h->keys[k] = NULL;
    h->vals[k] = NULL;
}

int tn_pg_hosts_init(struct tn_pg_hosts *h, const char *conninfo,
                     int64_t default_ms, char *err, size_t err_cap)
{
    memset(h, 0, sizeof(*h));
    char *perr = NULL;
    PQconninfoOption *o = PQconninfoParse(conninfo, &perr);
    if (o == NULL) {
        (void)snprintf(err, err_cap, "%s",
                       perr != NULL ? perr : "out of memory");
        PQfreemem(perr);
        return perr != NULL ? TN_EINVAL : TN_ENOMEM;
    }
    size_t n_keys = 0;
    size_t bytes = arena_bytes(o, &n_keys);
    h->strings = tn_malloc(bytes);
    h->keys = tn_calloc(n_keys + 1, sizeof(*h->keys));
    h->vals = tn_calloc(n_keys + 1, sizeof(*h->vals));
    int rc = h->strings == NULL || h->keys == NULL || h->vals == NULL
                 ? TN_ENOMEM
                 : TN_OK;
    char *at = h->strings;
    if (rc == 0)
        rc = split_hosts(h, o, &at, err, err_cap);
    if (rc == 0) {
        fill_keys(h, o, &at);
        const char *ct = value_of(o, "connect_timeout");
        long secs = ct != NULL ? strtol(ct, NULL, 10) : 0;
        h->deadline_ms = secs > 0 ? (int64_t)secs * 1000 : default_ms;
    }
    PQconninfoFree(o);
    if (rc < 0)
        tn_pg_hosts_release(h);
    return rc;
}

void tn_pg_hosts_release(struct tn_pg_hosts *h)
{
    tn_free(h->keys);
    tn_free(h->vals);
    tn_free(h->strings);
    tn_free(h->host);
    tn_free(h->hostaddr);
    tn_free(h->port);
    tn_free(h->suspect_ms);
    memset(h, 0, sizeof(*h));
}

void tn_pg_hosts_avoid(struct tn_pg_hosts *h, size_t i)
{
    h->suspect_ms[i] = tn_clock_now_ms();
}

void tn_pg_hosts_name(const struct tn_pg_hosts *h, size_t i, char *out,
                      size_t cap)
{
    const char *name = h->host[i] != NULL       ? h->host[i]
                       : h->hostaddr[i] != NULL ? h->hostaddr[i]
                                                : "default";
    (void)snprintf(out, cap, "%s:%s", name,
                   h->port[i] != NULL ? h->port[i] : "default");
}

void tn_pg_hosts_metrics(const struct tn_pg_hosts *h, struct tn_buf *out)
{
    (void)tn_buf_printf(out,
                        "# TYPE tenure_pg_connect_timeouts_total counter\n"
                        "tenure_pg_connect_timeouts_total %llu\n"
                        "# TYPE tenure_pg_answer_timeouts_total counter\n"
                        "tenure_pg_answer_timeouts_total %llu\n"
                        "# TYPE tenure_pg_host_moves_total counter\n"
                        "tenure_pg_host_moves_total %llu\n",
                        (unsigned long long)h->n_timeouts,
                        (unsigned long long)h->n_stalls,
                        (unsigned long long)h->n_moves);
}
