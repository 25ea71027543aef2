/* SPDX-License-Identifier: MIT */
/* Every connection the PostgreSQL store makes goes through here.  libpq's
 * non-blocking connect (PQconnectPoll) ignores connect_timeout and walks a
 * multi-host string in order: a host whose machine is paused accepts the
 * TCP connection (its kernel does, or a frozen postmaster's backlog) and
 * then answers nothing, and every host behind it waits.  So a link tries
 * one host at a time, under its own deadline (connect_timeout, or the
 * caller's default), and moves on to the next when one fails or stays
 * silent.  A round starts at the host that was read-write last and tries
 * the hosts that stalled last.  Each connection also gets TCP keepalives
 * and tcp_user_timeout unless the string sets them (src/store/pg/hosts.c
 * parses the string and keeps what the links learn of each host), so a
 * machine that vanished is noticed by the kernel; what a live kernel
 * cannot notice (a process stopped, a primary that stopped answering) is
 * bounded by the deadline the owner sets on each answer it awaits
 * (tn_pg_link_await).  Nothing here blocks; loop thread only. */
#include "store/pg/link.h"

#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "common/clock.h"
#include "common/log.h"

static void on_fd(void *arg, uint32_t events);
static void try_next(struct tn_pg_link *l);

/* ---- a link ---- */

void tn_pg_link_init(struct tn_pg_link *l, struct tn_loop *loop,
                     struct tn_pg_hosts *hosts,
                     const struct tn_pg_link_ops *ops, void *arg)
{
    memset(l, 0, sizeof(*l));
    l->loop = loop;
    l->hosts = hosts;
    l->ops = ops;
    l->arg = arg;
    l->fd = -1;
}

void tn_pg_link_unwatch(struct tn_pg_link *l)
{
    if (l->fd >= 0)
        tn_loop_del_fd(l->loop, l->fd);
    l->fd = -1;
    l->fd_events = 0;
}

void tn_pg_link_watch(struct tn_pg_link *l, uint32_t events)
{
    int fd = l->conn != NULL ? PQsocket(l->conn) : -1;
    if (fd != l->fd)
        tn_pg_link_unwatch(l);
    if (fd < 0)
        return;
    if (l->fd < 0) {
        if (tn_loop_add_fd(l->loop, fd, events, on_fd, l) == 0) {
            l->fd = fd;
            l->fd_events = events;
        }
        return;
    }
    if (events != l->fd_events && tn_loop_mod_fd(l->loop, fd, events) == 0)
        l->fd_events = events;
}

void tn_pg_link_close(struct tn_pg_link *l)
{
    tn_pg_link_unwatch(l);
    tn_loop_timer_disarm(l->loop, &l->deadline);
    if (l->conn != NULL)
        PQfinish(l->conn);
    l->conn = NULL;
    l->connecting = false;
}

bool tn_pg_link_is_up(const struct tn_pg_link *l)
{
    return l->conn != NULL && !l->connecting;
}

void tn_pg_link_fail(struct tn_pg_link *l, const char *why)
{
    char copy[sizeof(l->why)];
    (void)snprintf(copy, sizeof(copy), "%s", why);
    tn_pg_link_close(l);
    l->ops->fail(l->arg, copy);
}

/* Host i stopped answering: from now on it is tried last. */
static void suspect(struct tn_pg_link *l, size_t i)
{
    struct tn_pg_hosts *h = l->hosts;
    if (h->suspect_ms[i] == 0 && h->n > 1) {
        char name[128];
        tn_pg_hosts_name(h, i, name, sizeof(name));
        tn_log(TN_LOG_WARN, "store",
               "\"postgresql host stopped answering; trying it last\" "
               "host=\"%s\"",
               name);
    }
    h->suspect_ms[i] = tn_clock_now_ms();
}

void tn_pg_link_stalled(struct tn_pg_link *l, const char *why)
{
    suspect(l, l->host);
    tn_pg_link_fail(l, why);
}

static void answer_late(void *arg)
{
    struct tn_pg_link *l = arg;
    char why[160];
    l->hosts->n_stalls++;
    (void)snprintf(why, sizeof(why), "no answer within %lld ms",
                   (long long)l->wait_ms);
    tn_pg_link_stalled(l, why);
}

void tn_pg_link_await(struct tn_pg_link *l, int64_t ms)
{
    l->wait_ms = ms;
    tn_loop_timer_arm(l->loop, &l->deadline, tn_clock_now_ms() + ms,
                      answer_late, l);
}

void tn_pg_link_answered(struct tn_pg_link *l)
{
    tn_loop_timer_disarm(l->loop, &l->deadline);
}

/* ---- a round over the hosts ---- */

/* Add "host: what" to the round's failures. */
static void note_failure(struct tn_pg_link *l, const char *what)
{
    char name[128];
    char msg[300];
    tn_pg_hosts_name(l->hosts, l->host, name, sizeof(name));
    (void)snprintf(msg, sizeof(msg), "%s",
                   what != NULL ? what : PQerrorMessage(l->conn));
    for (char *c = msg; *c != '\0'; c++) {
        if (*c == '\n' || *c == '"')
            *c = ' ';
    }
    size_t used = strlen(l->why);
    if (used < sizeof(l->why) - 1)
        (void)snprintf(l->why + used, sizeof(l->why) - used, "%s%s: %s",
                       used > 0 ? "; " : "", name, msg);
}

/* This host failed: close it and go on with the next one. */
static void host_failed(struct tn_pg_link *l, const char *what)
{
    note_failure(l, what);
    tn_pg_link_unwatch(l);
    tn_loop_timer_disarm(l->loop, &l->deadline);
    if (l->conn != NULL)
        PQfinish(l->conn);
    l->conn = NULL;
    try_next(l);
}

static void connect_late(void *arg)
{
    struct tn_pg_link *l = arg;
    char what[96];
    l->hosts->n_timeouts++;
    suspect(l, l->host);
    (void)snprintf(what, sizeof(what), "no answer within %lld ms",
                   (long long)l->hosts->deadline_ms);
    host_failed(l, what);
}

static void connected(struct tn_pg_link *l)
{
    struct tn_pg_hosts *h = l->hosts;
    tn_loop_timer_disarm(l->loop, &l->deadline);
    if (PQsetnonblocking(l->conn, 1) != 0) {
        host_failed(l, "cannot make the connection non-blocking");
        return;
    }
    if (h->hint != l->host)
        h->n_moves++;
    h->hint = l->host;
    h->suspect_ms[l->host] = 0;
    l->connecting = false;
    l->why[0] = '\0';
    l->ops->up(l->arg);
}

static void poll_connect(struct tn_pg_link *l)
{
    /* PQconnectPoll may close the socket and open another (the next
     * address of the same host name). */
    tn_pg_link_unwatch(l);
    switch (PQconnectPoll(l->conn)) {
    case PGRES_POLLING_READING:
        tn_pg_link_watch(l, EPOLLIN);
        return;
    case PGRES_POLLING_WRITING:
        tn_pg_link_watch(l, EPOLLOUT);
        return;
    case PGRES_POLLING_OK:
        connected(l);
        return;
    default:
        host_failed(l, NULL);
        return;
    }
}

/* Notices ("table exists, skipping") are not errors: keep them off
 * stderr. */
static void ignore_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* Start connecting to host i. */
static void start_host(struct tn_pg_link *l, size_t i)
{
    struct tn_pg_hosts *h = l->hosts;
    l->host = i;
    h->vals[0] = h->host[i];
    h->vals[1] = h->hostaddr[i];
    h->vals[2] = h->port[i];
    l->conn = PQconnectStartParams(h->keys, h->vals, 0);
    if (l->conn == NULL) {
        host_failed(l, "out of memory");
        return;
    }
    if (PQstatus(l->conn) == CONNECTION_BAD) {
        host_failed(l, NULL);
        return;
    }
    PQsetNoticeProcessor(l->conn, ignore_notice, NULL);
    tn_loop_timer_arm(l->loop, &l->deadline, tn_clock_now_ms() + h->deadline_ms,
                      connect_late, l);
    tn_pg_link_watch(l, EPOLLOUT);
}

/* The suspect not tried yet this round that has been suspect longest
 * (the one given up on last is tried last), or n. */
static size_t oldest_suspect(const struct tn_pg_link *l)
{
    const struct tn_pg_hosts *h = l->hosts;
    size_t best = h->n;
    for (size_t i = 0; i < h->n; i++) {
        if ((l->tried & (UINT64_C(1) << i)) != 0 || h->suspect_ms[i] == 0)
            continue;
        if (best == h->n || h->suspect_ms[i] < h->suspect_ms[best])
            best = i;
    }
    return best;
}

/* The next host of the round: the hosts that answer, from the hint on,
 * then the suspects, longest suspected first; when none is left the round
 * has failed. */
static void try_next(struct tn_pg_link *l)
{
    const struct tn_pg_hosts *h = l->hosts;
    while (l->pos < h->n) {
        size_t i = (h->hint + l->pos++) % h->n;
        if (h->suspect_ms[i] == 0) {
            l->tried |= UINT64_C(1) << i;
            start_host(l, i);
            return;
        }
    }
    size_t i = oldest_suspect(l);
    if (i < h->n) {
        l->tried |= UINT64_C(1) << i;
        start_host(l, i);
        return;
    }
    char why[sizeof(l->why)];
    (void)snprintf(why, sizeof(why), "%s", l->why);
    l->connecting = false;
    l->ops->fail(l->arg, why);
}

void tn_pg_link_connect(struct tn_pg_link *l)
{
    tn_pg_link_close(l);
    l->connecting = true;
    l->pos = 0;
    l->tried = 0;
    l->why[0] = '\0';
    try_next(l);
}

static void on_fd(void *arg, uint32_t events)
{
    struct tn_pg_link *l = arg;
    if (l->connecting) {
        poll_connect(l);
        return;
    }
    l->ops->io(l->arg, events);
}
