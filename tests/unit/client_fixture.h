/* SPDX-License-Identifier: MIT */
/* A scripted HTTP responder for the client's unit tests: a loopback
 * listener whose every connection gets its own thread, reads one request
 * (headers and a Content-Length body), asks the test's answer function
 * what to say, and closes.  It counts the requests by kind and how many
 * were waiting for their answer at once (the keepalive's concurrency).  An
 * answer may be held until the test lets it go (a slow or hung server).
 * The client's side of these tests runs on the real monotonic clock; waits
 * are bounded polls on what the responder or the client saw. */
#ifndef TN_TEST_CLIENT_FIXTURE_H
#define TN_TEST_CLIENT_FIXTURE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"

#define FX_REQ_MAX 65536
#define FX_BUF_MAX (FX_REQ_MAX + 4096) /* a request with its headers */

struct fx_req {
    char method[16];       /* "PATCH", ... */
    char path[1024];       /* as sent */
    char body[FX_REQ_MAX]; /* NUL-terminated */
};

struct fx_answer {
    int status;       /* HTTP status; 0 = never answer (hang until quit) */
    const char *body; /* JSON or NULL */
    bool hold;        /* wait until fx->held_go before answering */
};

struct fx {
    int fd;                 /* listening socket */
    char url[64];           /* http://127.0.0.1:PORT */
    atomic_bool quit;       /* stop serving */
    atomic_bool held_go;    /* let held answers go */
    atomic_int requests;    /* requests read */
    atomic_int waiting;     /* requests read, not yet answered */
    atomic_int max_waiting; /* most at once */
    pthread_t thread;       /* the acceptor */
    pthread_mutex_t mu;     /* guards answer_ud's state */
    void (*answer)(struct fx *fx, const struct fx_req *req,
                   struct fx_answer *out); /* the script */
    void *ud;                              /* the script's state */
    atomic_int threads;                    /* connection threads alive */
};

struct fx_conn {
    struct fx *fx; /* the responder */
    int fd;        /* this connection */
};

/* Read until the headers end and the body of Content-Length is in. */
static inline bool fx_read_req(int fd, struct fx_req *r)
{
    char *b = calloc(1, FX_BUF_MAX);
    size_t len = 0;
    bool ok = false;
    while (b != NULL && len < FX_BUF_MAX - 1) {
        ssize_t n = read(fd, b + len, FX_BUF_MAX - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        char *end = strstr(b, "\r\n\r\n");
        if (end == NULL)
            continue;
        const char *cl = strcasestr(b, "Content-Length:");
        size_t want = cl != NULL && cl < end ? strtoul(cl + 15, NULL, 10) : 0;
        size_t have = len - (size_t)(end + 4 - b);
        if (have < want)
            continue;
        (void)sscanf(b, "%15s %1023s", r->method, r->path);
        size_t blen = want < FX_REQ_MAX - 1 ? want : FX_REQ_MAX - 1;
        memcpy(r->body, end + 4, blen);
        r->body[blen] = '\0';
        ok = true;
        break;
    }
    free(b);
    return ok;
}

static inline void fx_nap_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (ms % 1000) * 1000000L};
    (void)nanosleep(&ts, NULL);
}

static inline void fx_reply(int fd, const struct fx_answer *a)
{
    const char *body = a->body != NULL ? a->body : "";
    char head[256];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     a->status, strlen(body));
    /* The client may have given up on this answer and closed (a hung
     * renew): MSG_NOSIGNAL, or the SIGPIPE ends the whole test program. */
    (void)!send(fd, head, (size_t)n, MSG_NOSIGNAL);
    (void)!send(fd, body, strlen(body), MSG_NOSIGNAL);
}

static inline void *fx_serve_conn(void *arg)
{
    struct fx_conn *cn = arg;
    struct fx *fx = cn->fx;
    struct fx_req *r = calloc(1, sizeof(*r));
    if (r != NULL && fx_read_req(cn->fd, r)) {
        atomic_fetch_add(&fx->requests, 1);
        int w = atomic_fetch_add(&fx->waiting, 1) + 1;
        int m = atomic_load(&fx->max_waiting);
        while (w > m && !atomic_compare_exchange_weak(&fx->max_waiting, &m, w))
            ;
        struct fx_answer a = {500, "{\"error\":\"internal\"}", false};
        pthread_mutex_lock(&fx->mu);
        fx->answer(fx, r, &a);
        pthread_mutex_unlock(&fx->mu);
        while ((a.status == 0 || (a.hold && !atomic_load(&fx->held_go))) &&
               !atomic_load(&fx->quit))
            fx_nap_ms(1);
        atomic_fetch_sub(&fx->waiting, 1);
        if (a.status != 0)
            fx_reply(cn->fd, &a);
    }
    free(r);
    close(cn->fd);
    free(cn);
    atomic_fetch_sub(&fx->threads, 1);
    return NULL;
}

static inline void *fx_accept(void *arg)
{
    struct fx *fx = arg;
    while (!atomic_load(&fx->quit)) {
        int c = accept(fx->fd, NULL, NULL);
        if (c < 0)
            return NULL;
        struct fx_conn *cn = malloc(sizeof(*cn));
        cn->fx = fx;
        cn->fd = c;
        pthread_t t;
        atomic_fetch_add(&fx->threads, 1);
        if (pthread_create(&t, NULL, fx_serve_conn, cn) != 0) {
            atomic_fetch_sub(&fx->threads, 1);
            close(c);
            free(cn);
            continue;
        }
        pthread_detach(t);
    }
    return NULL;
}

static inline void fx_start(struct fx *fx,
                            void (*answer)(struct fx *, const struct fx_req *,
                                           struct fx_answer *),
                            void *ud)
{
    memset(fx, 0, sizeof(*fx));
    fx->answer = answer;
    fx->ud = ud;
    pthread_mutex_init(&fx->mu, NULL);
    fx->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fx->fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        listen(fx->fd, 64) != 0)
        abort();
    socklen_t len = sizeof(a);
    (void)getsockname(fx->fd, (struct sockaddr *)&a, &len);
    snprintf(fx->url, sizeof(fx->url), "http://127.0.0.1:%d",
             ntohs(a.sin_port));
    if (pthread_create(&fx->thread, NULL, fx_accept, fx) != 0)
        abort();
}

static inline void fx_stop(struct fx *fx)
{
    atomic_store(&fx->quit, true);
    shutdown(fx->fd, SHUT_RDWR);
    close(fx->fd);
    pthread_join(fx->thread, NULL);
    for (int i = 0; i < 5000 && atomic_load(&fx->threads) > 0; i++)
        fx_nap_ms(1);
    pthread_mutex_destroy(&fx->mu);
}

/* Poll until *v >= want or 5 s passed. */
static inline bool fx_wait_for(atomic_int *v, int want)
{
    int64_t until = tn_clock_mono_ms() + 5000;
    while (atomic_load(v) < want && tn_clock_mono_ms() < until)
        fx_nap_ms(1);
    return atomic_load(v) >= want;
}

#endif
