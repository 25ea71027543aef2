/* SPDX-License-Identifier: MIT */
/* The hosts of one PostgreSQL connection string (hosts.c), parsed once
 * and shared by every link of a store (link.h). */
#ifndef TN_STORE_PG_HOSTS_H
#define TN_STORE_PG_HOSTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* Hosts a connection string may name (a round keeps a bit per host). */
#define TN_PG_MAX_HOSTS 64

/* The hosts of one connection string, shared by every link of a store:
 * which host was read-write last (where the next connection starts) and
 * which stalled (tried last).  Loop thread only. */
struct tn_pg_hosts {
    const char **keys;   /* libpq keywords, NULL-terminated; the
                            first three are host, hostaddr, port */
    const char **vals;   /* their values; [0..2] set per host */
    char *strings;       /* owned: every value above */
    size_t n;            /* hosts, >= 1 */
    char **host;         /* n entries (NULL: libpq's default) */
    char **hostaddr;     /* n entries or NULL */
    char **port;         /* n entries (NULL: default port) */
    int64_t deadline_ms; /* to connect to one host, > 0 */
    size_t hint;         /* host of the last good connection */
    int64_t *suspect_ms; /* n: when the host last stalled, 0 if
                            it answered since */
    uint64_t n_timeouts; /* connects that hit deadline_ms */
    uint64_t n_stalls;   /* answers that did not come in time */
    uint64_t n_moves;    /* connections made to another host
                            than the previous one */
};

/* Parse conninfo into h (every host on its own).  0, TN_EINVAL with
 * *err set (a static or libpq message, for the caller to copy), or
 * TN_ENOMEM.  default_ms bounds one host's connect when the string has
 * no connect_timeout. */
int tn_pg_hosts_init(struct tn_pg_hosts *h, const char *conninfo,
                     int64_t default_ms, char *err, size_t err_cap);
void tn_pg_hosts_release(struct tn_pg_hosts *h);
/* Try host i last from now on (until a connection to it succeeds). */
void tn_pg_hosts_avoid(struct tn_pg_hosts *h, size_t i);
/* "host:port" of host i, for logs. */
void tn_pg_hosts_name(const struct tn_pg_hosts *h, size_t i, char *out,
                      size_t cap);

/* The shared counters, as Prometheus lines. */
void tn_pg_hosts_metrics(const struct tn_pg_hosts *h, struct tn_buf *out);

#endif
