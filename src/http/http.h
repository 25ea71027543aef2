/* SPDX-License-Identifier: MIT */
/* The HTTP adapter: the only module that knows libmicrohttpd.  It accepts
 * connections on the loop thread, reads each request with capped headers
 * and body, hands the complete request to one handler, and sends the reply
 * the handler gives, at once or later (the connection is parked meanwhile).
 * It knows nothing of leases or of JSON.  Every function is loop-thread
 * only. */
#ifndef TN_HTTP_HTTP_H
#define TN_HTTP_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/err.h>

struct tn_loop;
struct tn_http;
struct tn_http_req;

enum tn_http_method {
    TN_HTTP_GET,
    TN_HTTP_HEAD,
    TN_HTTP_POST,
    TN_HTTP_PUT,
    TN_HTTP_PATCH,
    TN_HTTP_DELETE,
    TN_HTTP_OTHER,
};

/* Called once per request with the whole request, or with
 * tn_http_req_error() set (TN_ETOOBIG: body over the cap; TN_EHDRTOOBIG:
 * headers over the cap).  The handler must eventually call tn_http_reply()
 * exactly once, during the call or later. */
typedef void (*tn_http_handler_fn)(void *app, struct tn_http_req *req);

struct tn_http_config {
    const char *listen;            /* "host:port"; port 0 picks one */
    size_t max_connections;        /* parked ones count too */
    int64_t request_timeout_ms;    /* whole request, and idle keep-alive */
    size_t max_body_bytes;         /* over it: TN_ETOOBIG */
    size_t max_header_bytes;       /* over it: TN_EHDRTOOBIG */
    const char *tls_cert_pem;      /* serve HTTPS with this certificate,
                                      or NULL for plain HTTP */
    const char *tls_key_pem;       /* its private key */
    const char *tls_client_ca_pem; /* verify client certificates against
                                      this CA, or NULL */
    tn_http_handler_fn handler;    /* the application */
    void *app;                     /* its argument */
};

/* Start listening.  0, TN_EINVAL (bad address, with em), TN_EIO. */
int tn_http_start(struct tn_loop *loop, const struct tn_http_config *cfg,
                  struct tn_http **out, struct tn_errmsg *em);
/* The port actually bound. */
uint16_t tn_http_port(const struct tn_http *h);
/* Stop accepting new connections (drain).  Parked requests stay. */
void tn_http_quiesce(struct tn_http *h);
/* Number of requests whose reply has not been sent yet. */
size_t tn_http_pending(const struct tn_http *h);
/* Stop and free; every parked request must have been answered. */
void tn_http_stop(struct tn_http *h);

enum tn_http_method tn_http_req_method(const struct tn_http_req *r);
/* The raw (still percent-encoded) path, without the query. */
const char *tn_http_req_path(const struct tn_http_req *r);
/* True when every query argument is valid percent-encoding; check it
 * first, since tn_http_req_query answers NULL for an undecodable value. */
bool tn_http_req_query_valid(struct tn_http_req *r);
/* Percent-decoded query argument, NULL if absent.  Borrowed until reply. */
const char *tn_http_req_query(struct tn_http_req *r, const char *key,
                              size_t *len_out);
const char *tn_http_req_header(const struct tn_http_req *r, const char *name);
const char *tn_http_req_body(const struct tn_http_req *r, size_t *len_out);
int tn_http_req_error(const struct tn_http_req *r);
/* The subject CN of the client's certificate, when it presented one that
 * verifies against the configured client CA.  0 (CN in out, NUL-ended),
 * or TN_EUNAUTH (no TLS, no certificate, not valid, or no CN). */
int tn_http_req_peer_cn(const struct tn_http_req *r, char *out, size_t len);
/* The subject CN of the client's certificate, when it presented one that
 * verifies against the configured client CA.  0 (CN in out, NUL-ended),
 * or TN_EUNAUTH (no TLS, no certificate, not valid, or no CN). */
int tn_http_req_peer_cn(const struct tn_http_req *r, char *out, size_t len);
/* False once the client has closed its end (checked without reading). */
bool tn_http_req_is_connected(const struct tn_http_req *r);

/* Add "Allow: methods" to the reply (a 405).  methods is borrowed and
 * must be a string literal or outlive the reply. */
void tn_http_req_set_allow(struct tn_http_req *r, const char *methods);

/* Send the reply (body copied).  retry_after_s > 0 adds Retry-After.
 * Afterwards r must not be touched. */
void tn_http_reply(struct tn_http_req *r, unsigned status,
                   const char *content_type, const char *body, size_t len,
                   int64_t retry_after_s);

/* Streaming replies (server-sent events). */
struct tn_http_stream;
/* Called once when the stream's connection is gone; the stream is freed
 * right after.  Loop thread. */
typedef void (*tn_http_stream_close_fn)(void *ctx);

/* Answer r with 200 and a body written later with tn_http_stream_write.
 * At most max_buffered bytes may wait unsent: past that the stream is cut
 * (a slow consumer never grows memory without bound).  Returns the stream,
 * or NULL on out of memory (then r was answered 500).  r must not be used
 * afterwards. */
struct tn_http_stream *tn_http_reply_stream(struct tn_http_req *r,
                                            const char *content_type,
                                            size_t max_buffered,
                                            tn_http_stream_close_fn on_close,
                                            void *ctx);
/* Queue bytes.  0, or TN_ETOOBIG when the consumer is too slow (the stream
 * is then being cut; on_close follows). */
int tn_http_stream_write(struct tn_http_stream *s, const char *p, size_t len);
/* End the stream after what is queued (server shutdown). */
void tn_http_stream_end(struct tn_http_stream *s);

/* Decode %XX escapes (and '+' as space when form) of s[0..len) into out
 * (len+1 bytes).  Returns the decoded length or -1 on a bad escape. */
long tn_http_pct_decode(const char *s, size_t len, bool form, char *out);

#endif
