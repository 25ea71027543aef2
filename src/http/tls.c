/* SPDX-License-Identifier: MIT */
/* TLS with OpenSSL 3 on the loop: non-blocking, the handshake driven by
 * the first reads and writes.  With a client CA, clients are asked for a
 * certificate; one that does not verify does not end the handshake (the
 * application answers 401 in the documented shape), it only names no
 * principal. */
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <string.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "http_int.h"

struct tn_tls {
    SSL_CTX *ctx; /* server context */
};

/* Accept every chain here; the verdict is read per request. */
static int verify_any(int ok, X509_STORE_CTX *x)
{
    (void)ok;
    (void)x;
    return 1;
}

static int load_chain(SSL_CTX *ctx, const char *pem)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    X509 *leaf = bio != NULL ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    int rc = leaf != NULL && SSL_CTX_use_certificate(ctx, leaf) == 1
                 ? TN_OK
                 : TN_EINVAL;
    X509_free(leaf);
    X509 *extra;
    while (rc == 0 &&
           (extra = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        if (SSL_CTX_add0_chain_cert(ctx, extra) != 1) {
            X509_free(extra);
            rc = TN_EINVAL;
        }
    }
    ERR_clear_error(); /* the end of the PEM reads as an error */
    BIO_free(bio);
    return rc;
}

static int load_key(SSL_CTX *ctx, const char *pem)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    EVP_PKEY *key =
        bio != NULL ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    int rc = key != NULL && SSL_CTX_use_PrivateKey(ctx, key) == 1 &&
                     SSL_CTX_check_private_key(ctx) == 1
                 ? TN_OK
                 : TN_EINVAL;
    EVP_PKEY_free(key);
    BIO_free(bio);
    return rc;
}

static int load_ca(SSL_CTX *ctx, const char *pem)
{
    BIO *bio = BIO_new_mem_buf(pem, -1);
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    STACK_OF(X509_NAME) *names = sk_X509_NAME_new_null();
    int n = 0;
    X509 *ca;
    while (bio != NULL && names != NULL &&
           (ca = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
        if (X509_STORE_add_cert(store, ca) == 1)
            n++;
        X509_NAME *nm = X509_NAME_dup(X509_get_subject_name(ca));
        if (nm != NULL && sk_X509_NAME_push(names, nm) == 0)
            X509_NAME_free(nm);
        X509_free(ca);
    }
    ERR_clear_error();
    BIO_free(bio);
    if (names != NULL)
        SSL_CTX_set_client_CA_list(ctx, names);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, verify_any);
    return n > 0 ? TN_OK : TN_EINVAL;
}

int tn_tls_new(const struct tn_http_config *cfg, struct tn_tls **out,
               struct tn_errmsg *em)
{
    struct tn_tls *t = tn_calloc(1, sizeof(*t));
    if (t == NULL)
        return TN_ENOMEM;
    t->ctx = SSL_CTX_new(TLS_server_method());
    int rc = t->ctx != NULL ? TN_OK : TN_ENOMEM;
    if (rc == 0) {
        (void)SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
        SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                                     SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                                     SSL_MODE_RELEASE_BUFFERS);
        (void)SSL_CTX_set_session_id_context(
            t->ctx, (const unsigned char *)"tenured", 7);
        rc = load_chain(t->ctx, cfg->tls_cert_pem);
    }
    if (rc == 0)
        rc = load_key(t->ctx, cfg->tls_key_pem);
    if (rc == 0 && cfg->tls_client_ca_pem != NULL)
        rc = load_ca(t->ctx, cfg->tls_client_ca_pem);
    if (rc < 0) {
        tn_errmsg_set(em, "cannot use the TLS certificate, key or client CA");
        tn_tls_free(t);
        return rc;
    }
    *out = t;
    return TN_OK;
}

void tn_tls_free(struct tn_tls *t)
{
    if (t == NULL)
        return;
    SSL_CTX_free(t->ctx);
    tn_free(t);
}

void *tn_tls_accept(struct tn_tls *t, int fd)
{
    SSL *ssl = SSL_new(t->ctx);
    if (ssl == NULL)
        return NULL;
    if (SSL_set_fd(ssl, fd) != 1) {
        SSL_free(ssl);
        return NULL;
    }
    SSL_set_accept_state(ssl);
    return ssl;
}

void tn_tls_close(void *ssl)
{
    SSL_free(ssl); /* no close_notify: the socket is closed right after */
}

static long outcome(SSL *ssl, int n)
{
    int e = SSL_get_error(ssl, n);
    ERR_clear_error();
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return TN_EBUSY;
    if (e == SSL_ERROR_ZERO_RETURN)
        return 0;
    return TN_EIO;
}

long tn_tls_read(void *ssl, char *p, size_t len)
{
    size_t got = 0;
    int ok = SSL_read_ex(ssl, p, len, &got);
    return ok == 1 ? (long)got : outcome(ssl, ok);
}

long tn_tls_write(void *ssl, const char *p, size_t len)
{
    size_t put = 0;
    int ok = SSL_write_ex(ssl, p, len, &put);
    return ok == 1 ? (long)put : outcome(ssl, ok);
}

int tn_tls_peer_cn(void *ssl, char *out, size_t len)
{
    X509 *crt = SSL_get1_peer_certificate(ssl);
    if (crt == NULL)
        return TN_EUNAUTH;
    int n = -1;
    if (SSL_get_verify_result(ssl) == X509_V_OK)
        n = X509_NAME_get_text_by_NID(X509_get_subject_name(crt),
                                      NID_commonName, out, (int)len);
    X509_free(crt);
    return n > 0 && (size_t)n < len && strlen(out) == (size_t)n ? TN_OK
                                                                : TN_EUNAUTH;
}
