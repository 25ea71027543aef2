/* SPDX-License-Identifier: MIT */
/* The front end's life: the listening socket, accepting, the deadline
 * sweep, start and stop.  The connections themselves are conn.c's. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <tenure/err.h>

#include "common/alloc.h"
#include "common/assert.h"
#include "common/clock.h"
#include "common/url.h"
#include "http_int.h"

#define DEFAULT_PIPELINE 16
#define DEFAULT_STREAM_TOTAL (64u << 20)
#define DEFAULT_REPLY_TOTAL (256u << 20)
#define ACCEPTS_PER_EVENT 64

int tn_http_adopt(struct tn_http *h, int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        (void)close(fd);
        return TN_EIO;
    }
    uint64_t before = h->st.accepted;
    tn_http_conn_accept(h, fd);
    return h->st.accepted > before ? TN_OK : TN_ENOMEM;
}

static void on_accept(void *arg, uint32_t events)
{
    struct tn_http *h = arg;
    (void)events;
    for (int i = 0; i < ACCEPTS_PER_EVENT && h->lfd >= 0; i++) {
        int fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or out of files: level-triggered, retried */
        tn_http_conn_accept(h, fd);
    }
}

/* A connection past its deadline: in a request too long, idle too long,
 * or closing and not taking its last bytes. */
static bool overdue(struct tn_http *h, struct conn *c, int64_t now)
{
    int64_t limit = h->cfg.request_timeout_ms;
    if (c->close_by_ms != 0)
        return now >= c->close_by_ms;
    if (c->req_start_ms != 0 && (c->cur != NULL || c->n_queued == 0)) {
        if (now - c->req_start_ms <= limit)
            return false;
        h->st.request_timeouts++;
        return true;
    }
    if (c->wr_blocked && now - c->wr_since_ms > limit)
        return true; /* not taking its replies */
    if (c->n_queued > 0 || c->out.len > 0 || now - c->idle_since_ms <= limit)
        return false;
    h->st.idle_timeouts++;
    return true;
}

static void sweep(void *arg)
{
    struct tn_http *h = arg;
    int64_t now = tn_clock_now_ms();
    struct conn *c = TAILQ_LAST(&h->conns, conn_lru);
    while (c != NULL) {
        struct conn *prev = TAILQ_PREV(c, conn_lru, lru);
        if (overdue(h, c, now))
            tn_http_conn_kill(c);
        c = prev;
    }
    tn_loop_timer_arm(h->loop, &h->sweep, now + TN_HTTP_SWEEP_MS, sweep, h);
}

int tn_http_listen_addrs(const char *listen, struct addrinfo **out,
                         struct tn_errmsg *em)
{
    *out = NULL;
    struct tn_hostport hp;
    char host[TN_URL_HOST_MAX + 1];
    char port[8];
    if (tn_url_parse_hostport(listen, strlen(listen), 0,
                              TN_URL_NEED_PORT | TN_URL_PORT_ZERO, &hp) < 0 ||
        tn_url_host_copy(&hp, host, sizeof(host)) < 0) {
        tn_errmsg_set(em, "listen address \"%s\" is not host:port", listen);
        return TN_EINVAL;
    }
    (void)snprintf(port, sizeof(port), "%u", (unsigned)hp.port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    if (getaddrinfo(host, port, &hints, out) != 0 || *out == NULL) {
        tn_errmsg_set(em, "cannot resolve listen address \"%s\"", listen);
        *out = NULL;
        return TN_EINVAL;
    }
    return TN_OK;
}

static bool is_loopback_addr(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a =
            &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return true;
        return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
    }
    return false;
}

bool tn_http_listen_is_loopback(const char *listen)
{
    struct addrinfo *ai = NULL;
    if (tn_http_listen_addrs(listen, &ai, NULL) < 0)
        return false;
    bool all = true;
    for (const struct addrinfo *p = ai; p != NULL; p = p->ai_next)
        all = all && is_loopback_addr(p->ai_addr);
    freeaddrinfo(ai);
    return all;
}

/* The first address of listen. */
static int resolve(const char *listen, struct sockaddr_storage *ss,
                   socklen_t *len, struct tn_errmsg *em)
{
    struct addrinfo *ai = NULL;
    int rc = tn_http_listen_addrs(listen, &ai, em);
    if (rc < 0)
        return rc;
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return TN_OK;
}

static int listen_on(struct tn_http *h, struct tn_errmsg *em)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    int rc = resolve(h->cfg.listen, &ss, &sl, em);
    if (rc < 0)
        return rc;
    h->lfd =
        socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (h->lfd < 0 ||
        setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(h->lfd, (struct sockaddr *)&ss, sl) < 0 ||
        listen(h->lfd, 1024) < 0) {
        tn_errmsg_set(em, "cannot listen on \"%s\" (in use or not allowed)",
                      h->cfg.listen);
        return TN_EIO;
    }
    sl = sizeof(ss);
    if (getsockname(h->lfd, (struct sockaddr *)&ss, &sl) == 0)
        h->port = ntohs(ss.ss_family == AF_INET6
                            ? ((struct sockaddr_in6 *)&ss)->sin6_port
                            : ((struct sockaddr_in *)&ss)->sin_port);
    return tn_loop_add_fd(h->loop, h->lfd, EPOLLIN, on_accept, h);
}

static void http_free(struct tn_http *h)
{
    if (h->lfd >= 0) {
        tn_loop_del_fd(h->loop, h->lfd);
        (void)close(h->lfd);
    }
    tn_tls_free(h->tls);
    tn_free(h->rbuf);
    while (h->spare != NULL) {
        struct tn_http_req *r = h->spare;
        h->spare = r->next_spare;
        tn_http_req_destroy(r);
    }
    tn_free(h);
}

int tn_http_start(struct tn_loop *loop, const struct tn_http_config *cfg,
                  struct tn_http **out, struct tn_errmsg *em)
{
    *out = NULL;
    struct tn_http *h = tn_calloc(1, sizeof(*h));
    if (h == NULL)
        return TN_ENOMEM;
    h->cfg = *cfg;
    if (h->cfg.max_pipeline == 0)
        h->cfg.max_pipeline = DEFAULT_PIPELINE;
    if (h->cfg.max_stream_bytes_total == 0)
        h->cfg.max_stream_bytes_total = DEFAULT_STREAM_TOTAL;
    if (h->cfg.max_reply_bytes_total == 0)
        h->cfg.max_reply_bytes_total = DEFAULT_REPLY_TOTAL;
    h->loop = loop;
    h->lfd = -1;
    TAILQ_INIT(&h->conns);
    h->tick.fn = tn_http_conn_tick;
    h->tick.arg = h;
    tn_http_parse_settings(&h->ps);
    int rc =
        (h->rbuf = tn_malloc(TN_HTTP_READ_BYTES)) == NULL ? TN_ENOMEM : TN_OK;
    if (rc == 0 && cfg->tls_cert_pem != NULL)
        rc = tn_tls_new(cfg, &h->tls, em);
    if (rc == 0 && cfg->listen != NULL)
        rc = listen_on(h, em);
    if (rc < 0) {
        http_free(h);
        return rc;
    }
    tn_loop_timer_arm(loop, &h->sweep, tn_clock_now_ms() + TN_HTTP_SWEEP_MS,
                      sweep, h);
    *out = h;
    return TN_OK;
}

uint16_t tn_http_port(const struct tn_http *h)
{
    return h->port;
}

void tn_http_quiesce(struct tn_http *h)
{
    if (h->lfd < 0)
        return;
    tn_loop_del_fd(h->loop, h->lfd);
    (void)close(h->lfd);
    h->lfd = -1;
}

size_t tn_http_pending(const struct tn_http *h)
{
    return h->pending;
}

void tn_http_get_stats(const struct tn_http *h, struct tn_http_stats *out)
{
    *out = h->st;
}

void tn_http_stop(struct tn_http *h)
{
    if (h == NULL)
        return;
    tn_loop_timer_disarm(h->loop, &h->sweep);
    if (h->tick_queued)
        tn_loop_cancel(h->loop, &h->tick);
    h->tick_queued = true; /* the kills below must not defer it again */
    while (!TAILQ_EMPTY(&h->conns))
        tn_http_conn_kill(TAILQ_FIRST(&h->conns));
    h->flush = NULL;
    while (h->dead != NULL) {
        struct conn *c = h->dead;
        h->dead = c->dead_next;
        tn_http_conn_free(c);
    }
    TN_ASSERT(h->pending == 0); /* every parked request was answered */
    http_free(h);
}
