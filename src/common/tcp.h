/* SPDX-License-Identifier: MIT */
/* A blocking client connection, plain TCP or TLS (OpenSSL), with a
 * timeout on connect and on every read and write.  For the Redis stream
 * publisher and follower, which speak RESP over it themselves (Debian
 * 12's hiredis 0.14 has no TLS).  Not an event-loop connection: one
 * thread owns it.  TLS verifies the peer by default (system CAs or
 * ca_file, host name or sni checked against the certificate). */
#ifndef TN_COMMON_TCP_H
#define TN_COMMON_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <tenure/err.h>

#define TN_TCP_PATH_MAX 512

/* TLS settings; all strings NUL-terminated, "" for unset. */
struct tn_tcp_tls {
    bool on;                         /* TLS at all */
    bool no_verify;                  /* skip certificate and name checks */
    char ca_file[TN_TCP_PATH_MAX];   /* PEM CA bundle, "" = system CAs */
    char cert_file[TN_TCP_PATH_MAX]; /* PEM client certificate or "" */
    char key_file[TN_TCP_PATH_MAX];  /* its PEM key, "" = in cert_file */
    char sni[256];                   /* server name to send and verify;
                                        "" = the host (unless an address) */
};

struct tn_tcp;

/* Set one TLS key from "tls_ca", "tls_cert", "tls_key", "tls_sni",
 * "tls_verify" (value 0 or 1).  TN_EINVAL for an unknown key or a bad or
 * too long value. */
int tn_tcp_tls_set(struct tn_tcp_tls *t, const char *key, const char *value);

/* Connect to host:port within timeout_ms (each later read or write has
 * the same timeout), with TLS when tls != NULL && tls->on.  0 and *out,
 * TN_ECONNECT (detail in em) or TN_ENOMEM. */
int tn_tcp_open(const char *host, int port, int64_t timeout_ms,
                const struct tn_tcp_tls *tls, struct tn_tcp **out,
                struct tn_errmsg *em);

/* Write all of p[0..n): 0 or TN_EIO. */
int tn_tcp_write(struct tn_tcp *c, const void *p, size_t n);

/* Read up to n bytes: > 0 bytes read, 0 at end of stream, < 0 on error or
 * timeout. */
ssize_t tn_tcp_read(struct tn_tcp *c, void *p, size_t n);

/* Close and free; NULL is a no-op. */
void tn_tcp_free(struct tn_tcp *c);

#endif
