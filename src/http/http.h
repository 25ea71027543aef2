/* SPDX-License-Identifier: MIT */
/* tenured's HTTP/1.1 front end, on the project's epoll loop.  It accepts
 * connections, parses each request with libhttp-parser (strictly: framing
 * in doubt is refused, never guessed), caps headers, body and time, hands
 * the complete request to one handler, and sends the reply the handler
 * gives, at once or later (the connection is simply not read meanwhile).
 * Replies of one loop turn leave as one write per connection.  It knows
 * nothing of leases or of JSON: error bodies are the application's.
 * Every function is loop-thread only. */
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
 * tn_http_req_error() set to why it was refused (see there); a refused
 * request's connection is closed after the reply.  The handler must
 * eventually call tn_http_reply() exactly once, during the call or later. */
typedef void (*tn_http_handler_fn)(void *app, struct tn_http_req *req);
/* Called when a request's headers are complete and a body follows, before
 * any of it is read: the application may answer at once (say 401), by
 * calling tn_http_reply() during the call; the body is then never read and
 * the connection closes after the reply.  Return true to read the body
 * and call the handler as usual. */
typedef bool (*tn_http_headers_fn)(void *app, struct tn_http_req *req);
/* The body cap of a request whose body would pass max_body_bytes, from
 * its head (method, target, fields): asked at most once per request, and
 * only then, before any of the body is read.  A larger answer raises the
 * cap of this request alone; max_body_bytes or less keeps it. */
typedef size_t (*tn_http_body_cap_fn)(void *app, struct tn_http_req *req);
/* A dispatched, unanswered request's client went away (see
 * tn_http_req_on_disconnect). */
typedef void (*tn_http_disconnect_fn)(void *ctx);

/* Counters and gauges of the front end, for the metrics page. */
struct tn_http_stats {
    uint64_t accepted;         /* connections accepted */
    uint64_t open;             /* connections open now (gauge) */
    uint64_t evicted;          /* closed to make room, oldest idle first */
    uint64_t refused;          /* closed at once: full of busy ones */
    uint64_t request_timeouts; /* closed mid-request past the deadline */
    uint64_t idle_timeouts;    /* idle keep-alives closed */
    uint64_t protocol_errors;  /* requests refused by the parser rules */
    uint64_t early_replies;    /* answered at the headers, body unread */
    uint64_t disconnects;      /* parked requests whose client left */
    uint64_t streams_cut;      /* streams over their output budget */
    uint64_t stream_bytes;     /* unsent stream bytes now (gauge) */
    uint64_t reply_bytes;      /* unsent bytes of every connection (gauge) */
    uint64_t slow_readers;     /* closed: not reading, over the reply total */
    uint64_t cross_site;       /* refused for their Host or Origin */
};

struct tn_http_config {
    const char *listen;            /* "host:port"; port 0 picks one; NULL:
                                      no listener (tn_http_adopt only) */
    size_t max_connections;        /* parked ones count too */
    int64_t request_timeout_ms;    /* first byte of a request to its last,
                                      and idle keep-alive */
    size_t max_body_bytes;         /* over it: TN_ETOOBIG */
    size_t max_header_bytes;       /* over it: TN_EHDRTOOBIG (the target
                                      alone: TN_EURITOOLONG) */
    size_t max_pipeline;           /* requests read ahead of their replies
                                      (0: 16) */
    size_t max_stream_bytes_total; /* unsent bytes of every stream
                                      together (0: 64 MiB) */
    size_t max_reply_bytes_total;  /* unsent bytes of every connection
                                      together (0: 256 MiB); past it the
                                      connection holding most that the
                                      socket does not take is closed */
    const char *tls_cert_pem;      /* serve HTTPS with this certificate,
                                      or NULL for plain HTTP */
    const char *tls_key_pem;       /* its private key */
    const char *tls_client_ca_pem; /* verify client certificates against
                                      this CA, or NULL */
    bool check_host;               /* refuse a Host that names no name of
                                      this server (origin.c) */
    const char *allow_hosts;       /* more names a Host may give: lines of
                                      comma-separated names ("*": any), or
                                      NULL; borrowed, outlives the front
                                      end */
    const char *allow_origins;     /* origins besides this server's own
                                      whose pages may change state, the
                                      same way ("*": any), or NULL */
    tn_http_handler_fn handler;    /* the application */
    tn_http_headers_fn on_headers; /* or NULL */
    tn_http_body_cap_fn body_cap;  /* or NULL: max_body_bytes for all */
    void *app;                     /* its argument */
};

/* The addresses a listener on listen (host:port, "[v6]:port": common/url.h;
 * port 0 picks a free one) binds: resolved with AI_PASSIVE as
 * tn_http_start resolves them.  0 and *out (freeaddrinfo it), or
 * TN_EINVAL (with em). */
struct addrinfo;
int tn_http_listen_addrs(const char *listen, struct addrinfo **out,
                         struct tn_errmsg *em);

/* Whether every address listen binds is a loopback one (127/8, ::1, a
 * v4-mapped 127/8): decided on the addresses the listener will bind,
 * resolved as it resolves them (AI_PASSIVE), never on the spelling (a
 * name may resolve to 0.0.0.0).  An address that does not resolve is
 * not loopback; the listener reports it. */
bool tn_http_listen_is_loopback(const char *listen);

/* Start listening.  0, TN_EINVAL (bad address, with em), TN_EIO. */
int tn_http_start(struct tn_loop *loop, const struct tn_http_config *cfg,
                  struct tn_http **out, struct tn_errmsg *em);
/* Serve fd, a connected stream socket (made non-blocking here), as one
 * more connection.  0, or TN_ENOMEM (fd is then closed).  For tests and
 * socket activation; with cfg.listen NULL nothing else is accepted. */
int tn_http_adopt(struct tn_http *h, int fd);
/* The port actually bound. */
uint16_t tn_http_port(const struct tn_http *h);
/* Stop accepting new connections (drain).  Parked requests stay. */
void tn_http_quiesce(struct tn_http *h);
/* Number of requests whose reply has not been sent yet. */
size_t tn_http_pending(const struct tn_http *h);
/* Stop and free; every parked request must have been answered. */
void tn_http_stop(struct tn_http *h);
/* Counters (copied into out). */
void tn_http_get_stats(const struct tn_http *h, struct tn_http_stats *out);

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
/* 0, or why the request was refused: TN_EINVAL (malformed, or framing in
 * doubt: Content-Length repeated or with Transfer-Encoding, control bytes
 * in the target), TN_ENOTIMPL (a transfer coding other than chunked),
 * TN_EHTTPVERSION (a request line of another version than HTTP/1.x),
 * TN_EURITOOLONG (target or a query value over its cap), TN_EHDRTOOBIG,
 * TN_ETOOBIG (body over the cap), TN_EMISDIRECTED (a Host that names no
 * name of this server), TN_EFORBIDDEN (a state-changing request from a
 * web page of another origin). */
int tn_http_req_error(const struct tn_http_req *r);
/* A short plain-text reason for tn_http_req_error (a string literal). */
const char *tn_http_req_error_message(const struct tn_http_req *r);
/* The subject CN of the client's certificate, when it presented one that
 * verifies against the configured client CA.  0 (CN in out, NUL-ended),
 * or TN_EUNAUTH (no TLS, no certificate, not valid, or no CN). */
int tn_http_req_peer_cn(const struct tn_http_req *r, char *out, size_t len);
/* The client's address as text ("127.0.0.1", "::1"; "local" for a Unix
 * socket, "" when unknown).  Borrowed until the reply. */
const char *tn_http_req_peer(const struct tn_http_req *r);
/* False once the client has closed its end. */
bool tn_http_req_is_connected(const struct tn_http_req *r);
/* Call fn(ctx) at once when the client of this dispatched request goes
 * away before the reply (read of 0, EPOLLRDHUP, reset); at most once, and
 * never after tn_http_reply.  fn may reply to the request. */
void tn_http_req_on_disconnect(struct tn_http_req *r, tn_http_disconnect_fn fn,
                               void *ctx);

/* The application's own data for r, from its headers to its handler
 * (what was decided before the body came).  free_fn(data) runs if r is
 * freed while data is still set: its client left before the body was
 * whole, and the handler never runs. */
void tn_http_req_set_app(struct tn_http_req *r, void *data,
                         void (*free_fn)(void *data));
/* The data set above, now the caller's (cleared on r), or NULL. */
void *tn_http_req_take_app(struct tn_http_req *r);

/* Add "Allow: methods" to the reply (a 405).  methods is borrowed and
 * must be a string literal or outlive the reply. */
void tn_http_req_set_allow(struct tn_http_req *r, const char *methods);
/* Add header lines to the reply: fields is "Name: value\r\n" lines, each
 * ended by CRLF, borrowed like methods above (a string literal). */
void tn_http_req_set_fields(struct tn_http_req *r, const char *fields);

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
 * At most max_buffered bytes may wait unsent, and all streams together at
 * most the configured total: past either the write is refused and the
 * stream is cut (a slow consumer never grows memory without bound).  Returns
 * the stream, or NULL on out of memory (then r was answered 500).  r must not
 * be used afterwards. */
struct tn_http_stream *tn_http_reply_stream(struct tn_http_req *r,
                                            const char *content_type,
                                            size_t max_buffered,
                                            tn_http_stream_close_fn on_close,
                                            void *ctx);
/* Queue bytes.  0, or TN_ETOOBIG when the consumer is too slow: the
 * stream is then cut, and the caller should end it with
 * tn_http_stream_cut (on_close follows). */
int tn_http_stream_write(struct tn_http_stream *s, const char *p, size_t len);
/* End a cut stream with these last bytes (a few hundred, past the budget)
 * and close it once they are written, or after a short grace. */
void tn_http_stream_cut(struct tn_http_stream *s, const char *p, size_t len);
/* End the stream after what is queued (server shutdown). */
void tn_http_stream_end(struct tn_http_stream *s);

/* Decode %XX escapes (and '+' as space when form) of s[0..len) into out
 * (len+1 bytes).  Returns the decoded length or -1 on a bad escape. */
long tn_http_pct_decode(const char *s, size_t len, bool form, char *out);

#endif
