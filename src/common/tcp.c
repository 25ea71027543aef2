/* SPDX-License-Identifier: MIT */
/* A blocking TCP or TLS client connection (see tcp.h).  Timeouts are the
 * socket's SO_RCVTIMEO/SO_SNDTIMEO, which also bound connect() and the TLS
 * handshake.  A write never raises SIGPIPE: plain writes use MSG_NOSIGNAL,
 * TLS writes block the signal around SSL_write and discard one it raised,
 * as libpq does, so a library user's process is never killed by it. */
#include "tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"

struct tn_tcp {
    int fd;       /* connected socket */
    SSL_CTX *ctx; /* TLS context or NULL */
    SSL *ssl;     /* TLS session or NULL for plain TCP */
};

static int copy(char *dst, size_t len, const char *v)
{
    size_t n = strlen(v);
    if (n >= len)
        return TN_EINVAL;
    memcpy(dst, v, n + 1);
    return TN_OK;
}

int tn_tcp_tls_set(struct tn_tcp_tls *t, const char *key, const char *value)
{
    if (strcmp(key, "tls_ca") == 0)
        return copy(t->ca_file, sizeof(t->ca_file), value);
    if (strcmp(key, "tls_cert") == 0)
        return copy(t->cert_file, sizeof(t->cert_file), value);
    if (strcmp(key, "tls_key") == 0)
        return copy(t->key_file, sizeof(t->key_file), value);
    if (strcmp(key, "tls_sni") == 0)
        return copy(t->sni, sizeof(t->sni), value);
    if (strcmp(key, "tls_verify") == 0 &&
        (strcmp(value, "0") == 0 || strcmp(value, "1") == 0)) {
        t->no_verify = value[0] == '0';
        return TN_OK;
    }
    return TN_EINVAL;
}

static int dial(const char *host, int port, int64_t timeout_ms,
                struct tn_errmsg *em)
{
    char ps[16];
    (void)snprintf(ps, sizeof(ps), "%d", port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    int g = getaddrinfo(host, ps, &hints, &ai);
    if (g != 0) {
        tn_errmsg_set(em, "resolve \"%s\": %s", host, gai_strerror(g));
        return -1;
    }
    struct timeval tv = {.tv_sec = timeout_ms / 1000,
                         .tv_usec = (timeout_ms % 1000) * 1000};
    int fd = -1;
    int err = 0;
    for (struct addrinfo *a = ai; a != NULL && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        if (connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
            err = errno;
            (void)close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(ai);
    if (fd < 0)
        tn_errmsg_set(em, "connect %s:%d: %s", host, port, strerror(err));
    return fd;
}

static void ssl_detail(struct tn_tcp *c, const char *what, struct tn_errmsg *em)
{
    char buf[200] = "";
    unsigned long e = ERR_get_error();
    if (e != 0)
        ERR_error_string_n(e, buf, sizeof(buf));
    long v = c->ssl != NULL ? SSL_get_verify_result(c->ssl) : X509_V_OK;
    if (v != X509_V_OK)
        tn_errmsg_set(em, "%s: certificate: %s", what,
                      X509_verify_cert_error_string(v));
    else
        tn_errmsg_set(em, "%s: %s", what, buf[0] != '\0' ? buf : "failed");
    ERR_clear_error();
}

static bool is_address(const char *host)
{
    unsigned char a[16];
    return inet_pton(AF_INET, host, a) == 1 ||
           inet_pton(AF_INET6, host, a) == 1;
}

static int tls_context(struct tn_tcp *c, const struct tn_tcp_tls *t,
                       struct tn_errmsg *em)
{
    c->ctx = SSL_CTX_new(TLS_client_method());
    if (c->ctx == NULL)
        return TN_ENOMEM;
    (void)SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION);
    bool ok = true;
    if (t->ca_file[0] != '\0')
        ok = SSL_CTX_load_verify_locations(c->ctx, t->ca_file, NULL) == 1;
    else
        ok = SSL_CTX_set_default_verify_paths(c->ctx) == 1;
    if (ok && t->cert_file[0] != '\0') {
        const char *key = t->key_file[0] != '\0' ? t->key_file : t->cert_file;
        ok = SSL_CTX_use_certificate_chain_file(c->ctx, t->cert_file) == 1 &&
             SSL_CTX_use_PrivateKey_file(c->ctx, key, SSL_FILETYPE_PEM) == 1 &&
             SSL_CTX_check_private_key(c->ctx) == 1;
    }
    if (!ok) {
        ssl_detail(c, "TLS files", em);
        return TN_ECONNECT;
    }
    SSL_CTX_set_verify(c->ctx, t->no_verify ? SSL_VERIFY_NONE : SSL_VERIFY_PEER,
                       NULL);
    return TN_OK;
}

static int tls_start(struct tn_tcp *c, const char *host,
                     const struct tn_tcp_tls *t, struct tn_errmsg *em)
{
    int rc = tls_context(c, t, em);
    if (rc < 0)
        return rc;
    c->ssl = SSL_new(c->ctx);
    if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1)
        return TN_ENOMEM;
    const char *name = t->sni[0] != '\0' ? t->sni : host;
    if (!is_address(name))
        (void)SSL_set_tlsext_host_name(c->ssl, name);
    if (!t->no_verify) {
        X509_VERIFY_PARAM *p = SSL_get0_param(c->ssl);
        bool ok = is_address(name) ? X509_VERIFY_PARAM_set1_ip_asc(p, name)
                                   : X509_VERIFY_PARAM_set1_host(p, name, 0);
        if (!ok)
            return TN_ENOMEM;
    }
    if (SSL_connect(c->ssl) != 1) {
        ssl_detail(c, "TLS handshake", em);
        return TN_ECONNECT;
    }
    return TN_OK;
}

int tn_tcp_open(const char *host, int port, int64_t timeout_ms,
                const struct tn_tcp_tls *tls, struct tn_tcp **out,
                struct tn_errmsg *em)
{
    struct tn_tcp *c = tn_calloc(1, sizeof(*c));
    if (c == NULL)
        return TN_ENOMEM;
    c->fd = dial(host, port, timeout_ms, em);
    int rc = c->fd >= 0 ? TN_OK : TN_ECONNECT;
    if (rc == 0 && tls != NULL && tls->on)
        rc = tls_start(c, host, tls, em);
    if (rc < 0) {
        tn_tcp_free(c);
        return rc;
    }
    *out = c;
    return TN_OK;
}

/* SSL_write with SIGPIPE blocked; a SIGPIPE it raised is discarded. */
static int ssl_write(SSL *ssl, const void *p, int n)
{
    sigset_t pipe, old, pending;
    (void)sigemptyset(&pipe);
    (void)sigaddset(&pipe, SIGPIPE);
    (void)pthread_sigmask(SIG_BLOCK, &pipe, &old);
    (void)sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE) == 1;
    int w = SSL_write(ssl, p, n);
    if (w <= 0 && !was_pending) {
        struct timespec zero = {0, 0};
        (void)sigtimedwait(&pipe, NULL, &zero);
    }
    (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
    return w;
}

int tn_tcp_write(struct tn_tcp *c, const void *p, size_t n)
{
    const char *s = p;
    for (size_t done = 0; done < n;) {
        size_t chunk = n - done < 65536 ? n - done : 65536;
        ssize_t w = c->ssl != NULL ? ssl_write(c->ssl, s + done, (int)chunk)
                                   : send(c->fd, s + done, chunk, MSG_NOSIGNAL);
        if (w <= 0) {
            ERR_clear_error();
            return TN_EIO;
        }
        done += (size_t)w;
    }
    return TN_OK;
}

ssize_t tn_tcp_read(struct tn_tcp *c, void *p, size_t n)
{
    if (c->ssl == NULL)
        return recv(c->fd, p, n, 0);
    int r = SSL_read(c->ssl, p, n > 65536 ? 65536 : (int)n);
    if (r > 0)
        return r;
    int e = SSL_get_error(c->ssl, r);
    ERR_clear_error();
    return e == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

void tn_tcp_free(struct tn_tcp *c)
{
    if (c == NULL)
        return;
    if (c->ssl != NULL)
        SSL_free(c->ssl);
    if (c->ctx != NULL)
        SSL_CTX_free(c->ctx);
    if (c->fd >= 0)
        (void)close(c->fd);
    tn_free(c);
}
