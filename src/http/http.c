/* SPDX-License-Identifier: MIT */
/* libmicrohttpd adapter.  MHD runs in external-epoll mode on the loop
 * thread: its epoll fd is one watcher of our loop.  A request whose reply
 * is not ready when the handler returns is suspended, and resumed by
 * tn_http_reply() (always on the loop thread, so a resume can never
 * overtake its suspend).  Connections are tracked to enforce a whole-
 * request timeout, which MHD's inactivity timeout alone does not give. */
#include "http.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/rand.h"

#define QUERY_SCRATCH_BYTES 8192
#define SWEEP_INTERVAL_MS 250
#define STREAM_SNDBUF_BYTES (64 * 1024)

struct conn {
    int fd;            /* the connection's socket */
    int64_t since_ms;  /* connect or previous reply, server clock */
    bool busy;         /* a request of it is parked */
    bool in_request;   /* headers received, reply not yet sent */
    bool evicted;      /* shut down by us; MHD closes it next */
    struct conn *prev; /* tracking list, newest first */
    struct conn *next; /* tracking list */
};

struct tn_http_req {
    struct tn_http *h;              /* owner */
    struct MHD_Connection *mc;      /* MHD's connection */
    struct conn *conn;              /* tracking record */
    enum tn_http_method method;     /* parsed method */
    const char *path;               /* MHD's url, valid until completion */
    struct tn_buf body;             /* capped body */
    struct tn_buf scratch;          /* decoded query values */
    int error;                      /* TN_ETOOBIG / TN_EHDRTOOBIG or 0 */
    bool dispatched;                /* handler called */
    bool suspended;                 /* MHD_suspend_connection called */
    bool gone;                      /* MHD completed it before our reply */
    struct MHD_Response *resp;      /* reply ready to queue */
    unsigned status;                /* of resp */
    const char *allow;              /* Allow header of a 405, or NULL */
    struct tn_http_req *next_spare; /* in tn_http.spare */
};

struct tn_http {
    struct tn_http_config cfg;  /* copy */
    struct tn_loop *loop;       /* our loop */
    struct MHD_Daemon *d;       /* MHD */
    int epfd;                   /* MHD's epoll fd, watched by loop */
    size_t pending;             /* dispatched, not yet replied */
    struct conn *conns;         /* every open connection, newest first */
    struct conn *oldest;        /* tail of conns */
    size_t n_active;            /* open and not evicted */
    struct tn_loop_timer sweep; /* whole-request timeout */
    struct tn_loop_timer kick;  /* run MHD after resumes */
    struct tn_http_req *spare;  /* finished requests kept for reuse */
    size_t n_spare;             /* how many */
};

/* Finished requests kept, with their body buffers, so that a request in
 * the steady state allocates nothing here.  Enough for every connection
 * of a busy server's working set; the rest are freed. */
#define SPARE_REQS 256
#define SPARE_BUF_BYTES 8192 /* a spare keeps buffers up to this big */

static enum tn_http_method parse_method(const char *m)
{
    static const struct {
        const char *name;
        enum tn_http_method m;
    } tab[] = {{"GET", TN_HTTP_GET},     {"HEAD", TN_HTTP_HEAD},
               {"POST", TN_HTTP_POST},   {"PUT", TN_HTTP_PUT},
               {"PATCH", TN_HTTP_PATCH}, {"DELETE", TN_HTTP_DELETE}};
    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
        if (strcmp(m, tab[i].name) == 0)
            return tab[i].m;
    }
    return TN_HTTP_OTHER;
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind,
                                    const char *key, const char *value)
{
    size_t *total = cls;
    (void)kind;
    *total += strlen(key) + (value != NULL ? strlen(value) : 0) + 4;
    return MHD_YES;
}

static struct conn *conn_of(struct MHD_Connection *mc)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci != NULL ? ci->socket_context : NULL;
}

static struct tn_http_req *req_new(struct tn_http *h, struct MHD_Connection *mc,
                                   const char *url, const char *method)
{
    struct tn_http_req *r = h->spare;
    if (r != NULL) {
        h->spare = r->next_spare;
        h->n_spare--;
        struct tn_buf body = r->body, scratch = r->scratch;
        memset(r, 0, sizeof(*r));
        r->body = body; /* emptied by req_free, storage kept */
        r->scratch = scratch;
    } else {
        if ((r = tn_calloc(1, sizeof(*r))) == NULL)
            return NULL;
        tn_buf_init(&r->body, h->cfg.max_body_bytes);
        tn_buf_init(&r->scratch, QUERY_SCRATCH_BYTES);
    }
    r->h = h;
    r->mc = mc;
    r->conn = conn_of(mc);
    if (r->conn != NULL)
        r->conn->in_request = true;
    r->method = parse_method(method);
    r->path = url;
    size_t hdr = strlen(url) + strlen(method) + 12;
    (void)MHD_get_connection_values(mc, MHD_HEADER_KIND, count_header, &hdr);
    if (hdr > h->cfg.max_header_bytes)
        r->error = TN_EHDRTOOBIG;
    return r;
}

static void req_destroy(struct tn_http_req *r)
{
    tn_buf_release(&r->body);
    tn_buf_release(&r->scratch);
    tn_free(r);
}

static void req_free(struct tn_http_req *r)
{
    struct tn_http *h = r->h;
    if (r->resp != NULL)
        MHD_destroy_response(r->resp);
    r->resp = NULL;
    if (h->n_spare >= SPARE_REQS || r->body.cap > SPARE_BUF_BYTES ||
        r->scratch.cap > SPARE_BUF_BYTES) {
        req_destroy(r);
        return;
    }
    tn_buf_reset(&r->body);
    tn_buf_reset(&r->scratch);
    r->next_spare = h->spare;
    h->spare = r;
    h->n_spare++;
}

static enum MHD_Result queue(struct tn_http_req *r)
{
    enum MHD_Result ok = MHD_queue_response(r->mc, r->status, r->resp);
    MHD_destroy_response(r->resp);
    r->resp = NULL;
    return ok;
}

static enum MHD_Result dispatch(struct tn_http_req *r)
{
    struct tn_http *h = r->h;
    r->dispatched = true;
    h->pending++;
    h->cfg.handler(h->cfg.app, r);
    if (r->resp != NULL)
        return queue(r);
    MHD_suspend_connection(r->mc);
    r->suspended = true;
    if (r->conn != NULL)
        r->conn->busy = true;
    return MHD_YES;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *mc,
                                 const char *url, const char *method,
                                 const char *version, const char *upload_data,
                                 size_t *upload_size, void **con_cls)
{
    struct tn_http *h = cls;
    struct tn_http_req *r = *con_cls;
    (void)version;
    if (r == NULL) {
        /* Never answer on the first call: MHD would drop keep-alive. */
        r = req_new(h, mc, url, method);
        *con_cls = r;
        return r != NULL ? MHD_YES : MHD_NO;
    }
    if (r->resp != NULL)
        return queue(r); /* resumed with the reply ready */
    if (r->dispatched)
        return MHD_YES;
    if (*upload_size > 0) {
        /* Over the cap the rest is read and dropped, so that the 413 can
         * be sent as a normal reply; the request timeout bounds it. */
        if (r->error == 0 &&
            tn_buf_append(&r->body, upload_data, *upload_size) < 0) {
            r->error = TN_ETOOBIG;
            tn_buf_release(&r->body);
        }
        *upload_size = 0;
        return MHD_YES;
    }
    return dispatch(r);
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct tn_http_req *r = *con_cls;
    (void)cls;
    (void)toe;
    struct conn *c = conn_of(mc);
    if (c != NULL) {
        c->since_ms = tn_clock_now_ms();
        c->in_request = false;
    }
    if (r == NULL)
        return;
    *con_cls = NULL;
    if (r->dispatched && r->suspended) {
        r->gone = true; /* freed by tn_http_reply */
        return;
    }
    req_free(r);
}

static void evict(struct tn_http *h, struct conn *c)
{
    (void)shutdown(c->fd, SHUT_RDWR);
    c->evicted = true;
    h->n_active--;
}

/* Over the limit, make room by shutting down the oldest connection that is
 * neither in a request nor parked: idle keep-alives and clients that never
 * sent a whole header block.  A flood of idle connections then cycles
 * through instead of locking well-behaved clients out. */
static void make_room(struct tn_http *h, struct conn *fresh)
{
    for (struct conn *c = h->oldest; c != NULL && c != fresh; c = c->prev) {
        if (!c->busy && !c->in_request && !c->evicted && c->fd >= 0) {
            evict(h, c);
            return;
        }
    }
}

static void conn_open(struct tn_http *h, struct MHD_Connection *mc,
                      void **socket_context)
{
    struct conn *c = tn_calloc(1, sizeof(*c));
    if (c == NULL)
        return;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    c->fd = ci != NULL ? ci->connect_fd : -1;
    c->since_ms = tn_clock_now_ms();
    c->next = h->conns;
    if (h->conns != NULL)
        h->conns->prev = c;
    else
        h->oldest = c;
    h->conns = c;
    h->n_active++;
    *socket_context = c;
    if (h->n_active > h->cfg.max_connections)
        make_room(h, c);
}

static void conn_close(struct tn_http *h, struct conn *c)
{
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        h->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    else
        h->oldest = c->prev;
    if (!c->evicted)
        h->n_active--;
    tn_free(c);
}

static void on_connection(void *cls, struct MHD_Connection *mc,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct tn_http *h = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        conn_open(h, mc, socket_context);
        return;
    }
    if (*socket_context != NULL)
        conn_close(h, *socket_context);
    *socket_context = NULL;
}

/* Shut down connections that took too long to send a whole request. */
static void sweep(void *arg)
{
    struct tn_http *h = arg;
    int64_t now = tn_clock_now_ms();
    for (struct conn *c = h->conns; c != NULL; c = c->next) {
        if (!c->busy && !c->evicted && c->fd >= 0 &&
            now - c->since_ms > h->cfg.request_timeout_ms)
            evict(h, c); /* MHD closes it on its next turn */
    }
    tn_loop_timer_arm(h->loop, &h->sweep, now + SWEEP_INTERVAL_MS, sweep, h);
}

/* Run MHD, then make sure it runs again when its own timeout says so:
 * in external-epoll mode MHD keeps connections with buffered work on an
 * internal list that no fd event announces (a body larger than one read,
 * a resumed connection). */
static void kick(void *arg);

static void run_mhd(struct tn_http *h)
{
    (void)MHD_run(h->d);
    MHD_UNSIGNED_LONG_LONG ms;
    if (MHD_get_timeout(h->d, &ms) != MHD_YES)
        return;
    int64_t due = tn_clock_now_ms() + (int64_t)ms;
    if (!h->kick.armed || h->kick.due_ms > due)
        tn_loop_timer_arm(h->loop, &h->kick, due, kick, h);
}

static void kick(void *arg)
{
    run_mhd(arg);
}

static void on_mhd_ready(void *arg, uint32_t events)
{
    (void)events;
    run_mhd(arg);
}

__attribute__((format(printf, 2, 0))) static void
mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[256];
    (void)cls;
    (void)vsnprintf(msg, sizeof(msg), fmt, ap);
    msg[strcspn(msg, "\n")] = '\0';
    tn_log(TN_LOG_DEBUG, "http", "\"%s\"", msg);
}

/* Split "host:port" / "[v6]:port" and resolve numerically. */
static int resolve(const char *listen, struct sockaddr_storage *ss,
                   socklen_t *len, struct tn_errmsg *em)
{
    char host[256];
    const char *colon = strrchr(listen, ':');
    if (colon == NULL || (size_t)(colon - listen) >= sizeof(host)) {
        tn_errmsg_set(em, "listen address \"%s\" is not host:port", listen);
        return TN_EINVAL;
    }
    size_t hl = (size_t)(colon - listen);
    memcpy(host, listen, hl);
    host[hl] = '\0';
    char *h = host;
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
        host[hl - 1] = '\0';
        h = host + 1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    if (getaddrinfo(h, colon + 1, &hints, &ai) != 0 || ai == NULL) {
        tn_errmsg_set(em, "cannot resolve listen address \"%s\"", listen);
        return TN_EINVAL;
    }
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return TN_OK;
}

static size_t unescape_none(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s); /* we decode path segments and queries ourselves */
}

/* The TLS options, or just MHD_OPTION_END for plain HTTP. */
static void tls_options(const struct tn_http *h, struct MHD_OptionItem *o)
{
    size_t n = 0;
    if (h->cfg.tls_cert_pem != NULL) {
        o[n++] =
            (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0,
                                    (void *)(uintptr_t)h->cfg.tls_cert_pem};
        o[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0,
                                         (void *)(uintptr_t)h->cfg.tls_key_pem};
    }
    if (h->cfg.tls_cert_pem != NULL && h->cfg.tls_client_ca_pem != NULL)
        o[n++] = (struct MHD_OptionItem){
            MHD_OPTION_HTTPS_MEM_TRUST, 0,
            (void *)(uintptr_t)h->cfg.tls_client_ca_pem};
    o[n] = (struct MHD_OptionItem){.option = MHD_OPTION_END};
}

static struct MHD_Daemon *start_mhd(struct tn_http *h,
                                    const struct sockaddr_storage *ss)
{
    unsigned flags =
        MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    if (ss->ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (h->cfg.tls_cert_pem != NULL)
        flags |= MHD_USE_TLS;
    struct MHD_OptionItem tls[4];
    tls_options(h, tls);
    unsigned timeout_s = (unsigned)((h->cfg.request_timeout_ms + 999) / 1000);
    size_t pool = h->cfg.max_header_bytes * 2 + 8192;
    return MHD_start_daemon(
        flags, 0, NULL, NULL, on_access, h, MHD_OPTION_SOCK_ADDR, ss,
        MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned)1,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)h->cfg.max_connections + 64,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool, MHD_OPTION_NOTIFY_COMPLETED,
        on_completed, h, MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
        MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, h,
        MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, MHD_OPTION_ARRAY, tls,
        MHD_OPTION_END);
}

int tn_http_start(struct tn_loop *loop, const struct tn_http_config *cfg,
                  struct tn_http **out, struct tn_errmsg *em)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    *out = NULL;
    int rc = resolve(cfg->listen, &ss, &sl, em);
    if (rc < 0)
        return rc;
    struct tn_http *h = tn_calloc(1, sizeof(*h));
    if (h == NULL)
        return TN_ENOMEM;
    h->cfg = *cfg;
    h->loop = loop;
    h->d = start_mhd(h, &ss);
    if (h->d == NULL) {
        tn_errmsg_set(em, "cannot listen on \"%s\" (in use or not allowed)",
                      cfg->listen);
        tn_free(h);
        return TN_EIO;
    }
    h->epfd = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_EPOLL_FD)->epoll_fd;
    rc = tn_loop_add_fd(loop, h->epfd, EPOLLIN, on_mhd_ready, h);
    if (rc < 0) {
        MHD_stop_daemon(h->d);
        tn_free(h);
        return rc;
    }
    tn_loop_timer_arm(loop, &h->sweep, tn_clock_now_ms() + SWEEP_INTERVAL_MS,
                      sweep, h);
    *out = h;
    return TN_OK;
}

uint16_t tn_http_port(const struct tn_http *h)
{
    const union MHD_DaemonInfo *di =
        MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    return di != NULL ? di->port : 0;
}

void tn_http_quiesce(struct tn_http *h)
{
    MHD_socket fd = MHD_quiesce_daemon(h->d);
    if (fd != MHD_INVALID_SOCKET)
        (void)close(fd);
}

size_t tn_http_pending(const struct tn_http *h)
{
    return h->pending;
}

void tn_http_stop(struct tn_http *h)
{
    if (h == NULL)
        return;
    TN_ASSERT(h->pending == 0); /* MHD must not stop with parked requests */
    tn_loop_timer_disarm(h->loop, &h->sweep);
    tn_loop_timer_disarm(h->loop, &h->kick);
    tn_loop_del_fd(h->loop, h->epfd);
    MHD_stop_daemon(h->d);
    while (h->spare != NULL) {
        struct tn_http_req *r = h->spare;
        h->spare = r->next_spare;
        req_destroy(r);
    }
    tn_free(h);
}

enum tn_http_method tn_http_req_method(const struct tn_http_req *r)
{
    return r->method;
}

const char *tn_http_req_path(const struct tn_http_req *r)
{
    return r->path;
}

int tn_http_req_error(const struct tn_http_req *r)
{
    return r->error;
}

int tn_http_req_peer_cn(const struct tn_http_req *r, char *out, size_t len)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->mc, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (ci == NULL || ci->tls_session == NULL || len == 0)
        return TN_EUNAUTH;
    gnutls_session_t ses = (gnutls_session_t)ci->tls_session;
    unsigned status = 0;
    unsigned n = 0;
    if (gnutls_certificate_verify_peers2(ses, &status) != GNUTLS_E_SUCCESS ||
        status != 0)
        return TN_EUNAUTH;
    const gnutls_datum_t *certs = gnutls_certificate_get_peers(ses, &n);
    gnutls_x509_crt_t crt = NULL;
    if (certs == NULL || n == 0 || gnutls_x509_crt_init(&crt) < 0)
        return TN_EUNAUTH;
    size_t sz = len;
    int rc = gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER);
    if (rc == 0)
        rc = gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0,
                                           0, out, &sz);
    gnutls_x509_crt_deinit(crt);
    return rc == 0 && sz > 0 ? TN_OK : TN_EUNAUTH;
}

bool tn_http_req_is_connected(const struct tn_http_req *r)
{
    if (r->gone)
        return false; /* MHD already closed it */
    if (r->conn == NULL)
        return true; /* untracked (out of memory): assume it is there */
    if (r->conn->evicted || r->conn->fd < 0)
        return false;
    char c;
    ssize_t n = recv(r->conn->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0)
        return false; /* orderly shutdown by the client */
    return n > 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

const char *tn_http_req_header(const struct tn_http_req *r, const char *name)
{
    return MHD_lookup_connection_value(r->mc, MHD_HEADER_KIND, name);
}

const char *tn_http_req_body(const struct tn_http_req *r, size_t *len_out)
{
    *len_out = r->body.len;
    return r->body.data != NULL ? r->body.data : "";
}

struct tn_http_stream {
    struct tn_http *h;                /* owner */
    struct MHD_Connection *mc;        /* its connection */
    struct tn_buf out;                /* queued bytes, capped */
    size_t off;                       /* bytes of out already handed to MHD */
    bool suspended;                   /* waiting for bytes */
    bool ending;                      /* end once out is drained */
    bool cut;                         /* over the cap: end with an error */
    tn_http_stream_close_fn on_close; /* when the connection is gone */
    void *ctx;                        /* its argument */
};

static void stream_wake(struct tn_http_stream *s)
{
    if (!s->suspended)
        return;
    s->suspended = false;
    MHD_resume_connection(s->mc);
    tn_loop_timer_arm(s->h->loop, &s->h->kick, 0, kick, s->h);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct tn_http_stream *s = cls;
    (void)pos;
    if (s->cut)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    size_t avail = s->out.len - s->off;
    if (avail == 0 && s->ending)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (avail == 0) {
        MHD_suspend_connection(s->mc); /* resumed by the next write */
        s->suspended = true;
        return 0;
    }
    size_t n = avail < max ? avail : max;
    memcpy(buf, s->out.data + s->off, n);
    s->off += n;
    if (s->off == s->out.len) {
        tn_buf_reset(&s->out);
        s->off = 0;
    }
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    struct tn_http_stream *s = cls;
    s->on_close(s->ctx);
    tn_buf_release(&s->out);
    tn_free(s);
}

struct tn_http_stream *tn_http_reply_stream(struct tn_http_req *r,
                                            const char *content_type,
                                            size_t max_buffered,
                                            tn_http_stream_close_fn on_close,
                                            void *ctx)
{
    struct tn_http_stream *s = tn_calloc(1, sizeof(*s));
    struct MHD_Response *resp = NULL;
    if (s != NULL)
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096,
                                                 stream_read, s, stream_free);
    if (resp == NULL) {
        tn_free(s);
        tn_http_reply(r, 500, "application/json",
                      "{\"error\":\"internal\",\"message\":\"out of memory\"}",
                      48, 0);
        return NULL;
    }
    s->h = r->h;
    s->mc = r->mc;
    s->on_close = on_close;
    s->ctx = ctx;
    tn_buf_init(&s->out, max_buffered);
    (void)MHD_add_response_header(resp, "Content-Type", content_type);
    (void)MHD_add_response_header(resp, "Cache-Control", "no-cache");
    TN_ASSERT(r->dispatched && r->resp == NULL);
    r->h->pending--;
    r->resp = resp;
    r->status = 200;
    if (r->conn != NULL) {
        r->conn->busy = true; /* a stream is never a slow request */
        /* Bound the kernel's share too: without this, send-buffer
         * autotuning would hold megabytes for a consumer that never
         * reads before our own cap ever saw a byte. */
        int sndbuf = STREAM_SNDBUF_BYTES;
        (void)setsockopt(r->conn->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf,
                         sizeof(sndbuf));
    }
    if (r->suspended) {
        r->suspended = false;
        MHD_resume_connection(r->mc);
        tn_loop_timer_arm(r->h->loop, &r->h->kick, 0, kick, r->h);
    }
    return s;
}

int tn_http_stream_write(struct tn_http_stream *s, const char *p, size_t len)
{
    if (s->cut || s->ending)
        return TN_ETOOBIG;
    if (tn_buf_append(&s->out, p, len) < 0) {
        s->cut = true; /* too slow: cut it rather than grow */
        stream_wake(s);
        return TN_ETOOBIG;
    }
    stream_wake(s);
    return TN_OK;
}

void tn_http_stream_end(struct tn_http_stream *s)
{
    s->ending = true;
    stream_wake(s);
}

long tn_http_pct_decode(const char *s, size_t len, bool form, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '%') {
            out[o++] = form && s[i] == '+' ? ' ' : s[i];
            continue;
        }
        int hi = i + 1 < len ? tn_hex_digit(s[i + 1]) : -1;
        int lo = i + 2 < len ? tn_hex_digit(s[i + 2]) : -1;
        if (hi < 0 || lo < 0)
            return -1;
        out[o++] = (char)(hi << 4 | lo);
        i += 2;
    }
    out[o] = '\0';
    return (long)o;
}

static bool pct_valid(const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s != '%')
            continue;
        if (tn_hex_digit(s[1]) < 0 || tn_hex_digit(s[2]) < 0)
            return false; /* s[2] is read only when s[1] is a digit */
        s += 2;
    }
    return true;
}

static enum MHD_Result check_arg(void *cls, enum MHD_ValueKind kind,
                                 const char *key, const char *value)
{
    bool *ok = cls;
    (void)kind;
    if (pct_valid(key) && (value == NULL || pct_valid(value)))
        return MHD_YES;
    *ok = false;
    return MHD_NO;
}

bool tn_http_req_query_valid(struct tn_http_req *r)
{
    bool ok = true;
    (void)MHD_get_connection_values(r->mc, MHD_GET_ARGUMENT_KIND, check_arg,
                                    &ok);
    return ok;
}

const char *tn_http_req_query(struct tn_http_req *r, const char *key,
                              size_t *len_out)
{
    const char *raw =
        MHD_lookup_connection_value(r->mc, MHD_GET_ARGUMENT_KIND, key);
    if (raw == NULL)
        return NULL;
    size_t rl = strlen(raw);
    size_t off = r->scratch.len;
    if (tn_buf_append(&r->scratch, raw, rl + 1) < 0)
        return NULL;
    long n = tn_http_pct_decode(raw, rl, true, r->scratch.data + off);
    if (n < 0)
        return NULL;
    *len_out = (size_t)n;
    return r->scratch.data + off;
}

void tn_http_req_set_allow(struct tn_http_req *r, const char *methods)
{
    r->allow = methods;
}

void tn_http_reply(struct tn_http_req *r, unsigned status,
                   const char *content_type, const char *body, size_t len,
                   int64_t retry_after_s)
{
    struct tn_http *h = r->h;
    TN_ASSERT(r->dispatched && r->resp == NULL);
    h->pending--;
    if (r->gone) {
        req_free(r);
        return;
    }
    r->resp = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body,
                                              MHD_RESPMEM_MUST_COPY);
    TN_ASSERT(r->resp != NULL);
    (void)MHD_add_response_header(r->resp, "Content-Type", content_type);
    if (r->allow != NULL)
        (void)MHD_add_response_header(r->resp, "Allow", r->allow);
    if (retry_after_s > 0) {
        char v[24];
        (void)snprintf(v, sizeof(v), "%lld", (long long)retry_after_s);
        (void)MHD_add_response_header(r->resp, "Retry-After", v);
    }
    r->status = status;
    if (r->suspended) {
        r->suspended = false;
        if (r->conn != NULL) {
            r->conn->busy = false;
            r->conn->since_ms = tn_clock_now_ms();
        }
        MHD_resume_connection(r->mc);
        tn_loop_timer_arm(h->loop, &h->kick, 0, kick, h);
    }
}
