/* SPDX-License-Identifier: MIT */
/* Internals of the HTTP front end shared by its files: accept.c (a new
 * connection), conn.c (the connection state machine and its budgets),
 * parse.c (requests, over libhttp-parser, into request.c's objects),
 * out.c (replies and event streams), queue.c (the reply queue and flush
 * list they all use) and tls.c (OpenSSL).  Calls go downward only:
 * listen.c, accept.c, conn.c, out.c, parse.c, request.c, queue.c.  Loop
 * thread only. */
#ifndef TN_HTTP_HTTP_INT_H
#define TN_HTTP_HTTP_INT_H

#include <http_parser.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "common/buf.h"
#include "common/loop.h"
#include "http.h"

#define TN_HTTP_MAX_HEADERS 64            /* header fields per request */
#define TN_HTTP_QUERY_VALUE_MAX 2048      /* decoded bytes per query value */
#define TN_HTTP_READ_BYTES (64 * 1024)    /* one read of the shared buffer */
#define TN_HTTP_OUT_KEEP_BYTES 16384      /* a drained out buffer kept */
#define TN_HTTP_SHARE_BYTES (64 * 1024)   /* replies one pump may make */
#define TN_HTTP_SWEEP_MS 250              /* deadline checks */
#define TN_HTTP_LINGER_MS 2000            /* a closing connection's drain */
#define TN_HTTP_LINGER_BYTES (1u << 20)   /* and how much it may drop */
#define TN_HTTP_CUT_HOLD_MS 300000        /* an ended stream's last words */
#define TN_HTTP_STREAM_SNDBUF (16 * 1024) /* kernel share of a stream */

struct tn_tls;
struct conn;

/* Where a request's head is being written: the target, a field name or
 * a field value (libhttp-parser hands each over in pieces). */
enum head_part { PART_NONE, PART_URL, PART_FIELD, PART_VALUE };

struct tn_http_req {
    struct tn_http *h;                  /* owner */
    struct conn *c;                     /* NULL once the connection is gone */
    struct tn_http_req *next;           /* the connection's reply queue */
    enum tn_http_method method;         /* parsed method */
    struct tn_buf head;                 /* target NUL (name NUL value NUL)* */
    enum head_part part;                /* what head's tail is */
    size_t head_bytes;                  /* of the head as sent */
    size_t hdr[TN_HTTP_MAX_HEADERS][2]; /* name/value offsets in head */
    size_t n_hdr;                       /* header fields */
    size_t query_off;                   /* raw query in head, or 0: none */
    struct tn_buf args;                 /* decoded query: key NUL val NUL */
    bool args_ok;                       /* every argument decoded */
    struct tn_buf body;                 /* capped body */
    bool body_cap_asked;                /* the body_cap hook answered */
    int error;                          /* TN_E* of a refused request, or 0 */
    const char *error_msg;              /* its reason, a string literal */
    bool keep_alive;                    /* the client keeps the connection */
    bool http10;                        /* HTTP/1.0: no chunked replies */
    bool dispatched;                    /* handed to the application */
    bool replied;                       /* reply formatted into out */
    bool disc_fired;                    /* on_disc was called */
    bool orphaning;                     /* its connection is being closed */
    tn_http_disconnect_fn on_disc;      /* the client went away, or NULL */
    void *disc_ctx;                     /* its argument */
    void *app;                          /* the application's, or NULL */
    void (*app_free)(void *app);        /* frees app if r goes first */
    const char *allow;                  /* Allow header of a 405, or NULL */
    const char *fields; /* more header lines ("Name: value\r\n"...), or NULL */
    struct tn_http_stream *stream;  /* the reply is this stream */
    struct tn_buf out;              /* reply bytes not yet handed on */
    struct tn_http_req *next_spare; /* in tn_http.spare */
};

struct tn_http_stream {
    struct tn_http_req *r;            /* its request, head of the queue */
    size_t max_buffered;              /* per-stream budget */
    size_t queued;                    /* its bytes not yet written */
    struct tn_buf pend;               /* whole chunks not yet in c->out */
    bool cut;                         /* over budget: no more writes */
    bool ending;                      /* end once drained */
    tn_http_stream_close_fn on_close; /* when the connection is gone */
    void *ctx;                        /* its argument */
};

struct conn {
    struct tn_http *h;          /* owner */
    struct tn_loop_watch w;     /* fd, edge-triggered */
    int fd;                     /* the socket */
    char peer[48];              /* the client's address, as text */
    void *ssl;                  /* OpenSSL's SSL, or NULL: plain */
    http_parser p;              /* libhttp-parser state */
    struct tn_http_req *cur;    /* request being parsed, or NULL */
    struct tn_http_req *q_head; /* dispatched, oldest first */
    struct tn_http_req *q_tail; /* newest dispatched */
    size_t n_queued;            /* dispatched, reply not yet written */
    size_t turn_left;           /* requests it may still start this pump */
    size_t share_bytes;         /* reply bytes made since this pump began */
    size_t reply_avg;           /* moving average of its reply bodies */
    struct tn_buf pend;         /* read but not yet parsed bytes */
    struct tn_buf out;          /* bytes to write, from out_off */
    size_t out_off;             /* bytes of out already written */
    size_t unsent;              /* counted in h->st.reply_bytes */
    int64_t req_start_ms;       /* first byte of the request, or 0 */
    int64_t idle_since_ms;      /* last request or reply done */
    int64_t wr_since_ms;        /* when wr_blocked was set */
    int64_t close_by_ms;        /* closing: kill at this time, or 0 */
    bool rd_ready;              /* the socket may have bytes to read */
    bool wr_blocked;            /* write found no room: wait for OUT */
    bool stop_reading;          /* refused or last request: read no more */
    bool peer_closed;           /* read the end of its input: the client
                                   sends no more (it may still read) */
    bool rdhup;                 /* the kernel saw the client's FIN, perhaps
                                   behind requests not read yet */
    bool probed;                /* 100 Continue sent to learn whether a
                                   half-closed client is still there */
    bool dead;                  /* closed; freed at the end of the turn */
    bool lingering;             /* answered and shut down: dropping input */
    size_t lingered;            /* bytes dropped meanwhile */
    bool in_flush;              /* on h->flush */
    struct conn *flush_next;    /* h->flush list */
    TAILQ_ENTRY(conn) lru;      /* h->conns: most recently active first */
    struct conn *dead_next;     /* h->dead list */
    /* The last Host that passed the site check (a client sends the same
     * one on every request), host_ok_len bytes; 0: none yet. */
    char host_ok[64];
    uint8_t host_ok_len;
};

struct tn_http {
    struct tn_http_config cfg;        /* copy */
    struct tn_loop *loop;             /* the loop */
    int lfd;                          /* listening socket, -1 once quiesced */
    uint16_t port;                    /* bound port */
    struct tn_tls *tls;               /* TLS context, or NULL */
    http_parser_settings ps;          /* parser callbacks */
    char *rbuf;                       /* shared read buffer */
    TAILQ_HEAD(conn_lru, conn) conns; /* most recently active first */
    struct conn *flush;               /* connections with bytes to write */
    struct conn *dead;                /* to free at the end of the turn */
    struct tn_loop_post tick;         /* flush and reap, deferred */
    bool tick_queued;                 /* tick is deferred */
    struct tn_loop_timer sweep;       /* deadlines */
    size_t pending;                   /* dispatched, not yet replied */
    struct tn_http_req *spare;        /* finished requests kept for reuse */
    size_t n_spare;                   /* how many */
    struct tn_http_stats st;          /* counters */
};

/* request.c: a request from h's spares (or new) for c; back to the
 * spares, or destroyed. */
struct tn_http_req *tn_http_req_new(struct tn_http *h, struct conn *c);
void tn_http_req_free(struct tn_http_req *r);
void tn_http_req_destroy(struct tn_http_req *r);
/* request.c: whether header names a and b are the same, case aside. */
bool tn_http_same_name(const char *a, const char *b);

/* parse.c */
void tn_http_parse_settings(http_parser_settings *ps);
/* Feed bytes to c's parser; returns bytes consumed, or TN_ENOMEM when c
 * must be killed (no memory to answer a malformed request).  Stops after
 * each whole request (dispatched), and at an error (dispatched as
 * refused). */
long tn_http_conn_feed(struct conn *c, const char *p, size_t len);
/* c's input ended in the middle of a request: answer it 400. */
void tn_http_conn_cut_short(struct conn *c);

/* origin.c */
/* 0 when a request with this method and these Host and Origin headers
 * (each NULL when absent) may be served as far as browsers go, else
 * TN_EMISDIRECTED (its Host names no name of this server) or
 * TN_EFORBIDDEN (it changes state and comes from a page of another
 * origin), with *msg_out set to the reason (a string literal).
 * host_passed: this very Host passed the Host check before (the check
 * reads nothing but the header and the configuration), so skip it. */
int tn_http_check_site(const struct tn_http *h, enum tn_http_method method,
                       const char *host, bool host_passed, const char *origin,
                       const char **msg_out);

/* accept.c: serve fd, a new connected socket (closed when refused). */
void tn_http_conn_accept(struct tn_http *h, int fd);

/* conn.c */
/* The loop's callback of a connection's socket (arg: the conn). */
void tn_http_conn_on_event(void *arg, uint32_t events);
/* End of a loop turn: write what the turn produced, free what died. */
void tn_http_conn_tick(void *arg);
void tn_http_conn_free(struct conn *c);
void tn_http_conn_kill(struct conn *c);

/* queue.c: what parse.c, out.c and conn.c share; calls none of them. */
/* Run the end-of-turn work (tn_http_conn_tick) once this turn is over. */
void tn_http_want_tick(struct tn_http *h);
/* c was active: most recently active first. */
void tn_http_conn_touch(struct conn *c);
/* c has bytes to write at the end of the turn. */
void tn_http_conn_want_flush(struct conn *c);
/* Put r at the end of c's reply queue (marks it dispatched). */
void tn_http_conn_enqueue(struct conn *c, struct tn_http_req *r);
/* r is whole (or refused): queue it and hand it to the application. */
void tn_http_conn_dispatch(struct conn *c, struct tn_http_req *r);
/* r's headers are complete and a body follows: let the application answer
 * now (authentication); false when it did. */
bool tn_http_conn_app_headers(struct conn *c, struct tn_http_req *r);
/* Send an interim 100 Continue. */
void tn_http_conn_continue(struct conn *c);

/* out.c */
/* Move the replies at the head of c's queue into c->out, in order. */
void tn_http_out_collect(struct conn *c);
/* n bytes of c->out were written. */
void tn_http_out_wrote(struct conn *c, size_t n);
/* c is going away: close its streams, detach and tell parked requests. */
void tn_http_out_orphan(struct conn *c);
/* c's client closed its sending side: a half-close, or the first half of
 * a close.  Parked waiting requests learn which it is (see out.c); every
 * reply still goes. */
void tn_http_out_peer_gone(struct conn *c);

/* tls.c */
int tn_tls_new(const struct tn_http_config *cfg, struct tn_tls **out,
               struct tn_errmsg *em);
void tn_tls_free(struct tn_tls *t);
void *tn_tls_accept(struct tn_tls *t, int fd);
void tn_tls_close(void *ssl);
/* >0 bytes, 0 end of stream, TN_EBUSY would block, TN_EIO failed. */
long tn_tls_read(void *ssl, char *p, size_t len);
long tn_tls_write(void *ssl, const char *p, size_t len);
int tn_tls_peer_cn(void *ssl, char *out, size_t len);

#endif
