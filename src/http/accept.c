/* SPDX-License-Identifier: MIT */
/* A new connection: room made for it under --max-connections, its peer
 * named, TLS started, its socket watched (conn.c serves it from then on). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "http_int.h"

/* Over the cap, close the least recently active connection that has no
 * request waiting for its reply and no live stream: idle keep-alives,
 * clients still sending, ended streams whose client does not read.  A flood of
 * idle or slow connections then cycles through instead of locking well-behaved
 * clients out. */
static bool make_room(struct tn_http *h)
{
    struct conn *c;
    TAILQ_FOREACH_REVERSE(c, &h->conns, conn_lru, lru)
    {
        bool ended = c->q_head != NULL && c->q_head->stream != NULL &&
                     c->q_head->stream->ending;
        if ((c->n_queued == 0 || ended) && !c->dead) {
            h->st.evicted++;
            tn_http_conn_kill(c);
            return true;
        }
    }
    return false;
}

/* The client's address, for limits per client: an IPv4 client of an
 * IPv6 socket is written as IPv4, so that it counts as one client. */
static void peer_of(int fd, char *out, size_t len)
{
    struct sockaddr_storage ss = {0};
    socklen_t sl = sizeof(ss);
    out[0] = '\0';
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
        return;
    const void *a = NULL;
    int family = ss.ss_family;
    if (family == AF_INET) {
        a = &((struct sockaddr_in *)&ss)->sin_addr;
    } else if (family == AF_INET6) {
        const struct in6_addr *a6 = &((struct sockaddr_in6 *)&ss)->sin6_addr;
        a = IN6_IS_ADDR_V4MAPPED(a6) ? (const void *)&a6->s6_addr[12] : a6;
        family = IN6_IS_ADDR_V4MAPPED(a6) ? AF_INET : AF_INET6;
    } else {
        (void)snprintf(out, len, "local");
        return;
    }
    if (inet_ntop(family, a, out, (socklen_t)len) == NULL)
        out[0] = '\0';
}

void tn_http_conn_accept(struct tn_http *h, int fd)
{
    if (h->st.open >= h->cfg.max_connections && !make_room(h)) {
        h->st.refused++;
        (void)close(fd);
        return;
    }
    struct conn *c = tn_calloc(1, sizeof(*c));
    if (c == NULL) {
        (void)close(fd);
        return;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->h = h;
    c->fd = fd;
    peer_of(fd, c->peer, sizeof(c->peer));
    c->idle_since_ms = tn_clock_now_ms();
    c->reply_avg = TN_HTTP_SHARE_BYTES; /* one in flight until known */
    http_parser_init(&c->p, HTTP_REQUEST);
    c->p.data = c;
    tn_buf_init(&c->pend, h->cfg.max_header_bytes + h->cfg.max_body_bytes +
                              TN_HTTP_READ_BYTES);
    tn_buf_init(&c->out, (size_t)-1);
    if (h->tls != NULL && (c->ssl = tn_tls_accept(h->tls, fd)) == NULL) {
        tn_http_conn_free(c);
        (void)close(fd);
        return;
    }
    if (tn_loop_watch_add(h->loop, &c->w, fd,
                          EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                          tn_http_conn_on_event, c) < 0) {
        if (c->ssl != NULL)
            tn_tls_close(c->ssl);
        tn_http_conn_free(c);
        (void)close(fd);
        return;
    }
    h->st.accepted++;
    h->st.open++;
    TAILQ_INSERT_HEAD(&h->conns, c, lru); /* most recently active */
}
