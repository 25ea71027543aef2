/* SPDX-License-Identifier: MIT */
/* A measurement, never a way to run tenured: LD_PRELOAD this into tenured
 * (bench/bench-vs-redis.sh with PARK_SHIM=1) to learn what parking a
 * request would cost if it cost no system calls.
 *
 * While a grant commits, libmicrohttpd suspends its connection: it takes
 * the socket out of its epoll set (EPOLL_CTL_DEL) and puts it back on
 * resume (EPOLL_CTL_ADD).  Here the DEL of a connected TCP socket is not
 * made, and the ADD that follows it is skipped, so the socket simply
 * stays in the set.  That is unsafe: an event for a suspended connection
 * (its client closing, a pipelined request) makes libmicrohttpd touch it
 * while it is suspended, and it may abort on resume ("Resumed connection
 * was already in EREADY set").  The benchmark's clients never do that
 * while they wait, so the run measures the throughput without those two
 * system calls per request, and nothing else. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FD 65536

static unsigned char skipped[MAX_FD]; /* DEL not made, ADD to skip */
static unsigned char kind[MAX_FD];    /* 0 unknown, 1 connection, 2 other */

static int (*real_epoll_ctl)(int, int, int, struct epoll_event *);
static int (*real_close)(int);

static bool is_connection(int fd)
{
    if (kind[fd] == 0) {
        int type = 0, listening = 1;
        socklen_t tl = sizeof(type), ll = sizeof(listening);
        bool conn =
            getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 &&
            type == SOCK_STREAM &&
            getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &ll) == 0 &&
            listening == 0;
        kind[fd] = conn ? 1 : 2;
    }
    return kind[fd] == 1;
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    if (real_epoll_ctl == NULL)
        real_epoll_ctl = (int (*)(int, int, int, struct epoll_event *))dlsym(
            RTLD_NEXT, "epoll_ctl");
    if (fd >= 0 && fd < MAX_FD) {
        if (op == EPOLL_CTL_DEL && !skipped[fd] && is_connection(fd)) {
            skipped[fd] = 1;
            return 0;
        }
        if (op == EPOLL_CTL_ADD && skipped[fd]) {
            skipped[fd] = 0;
            return 0;
        }
    }
    return real_epoll_ctl(epfd, op, fd, ev);
}

int close(int fd)
{
    if (real_close == NULL)
        real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
    if (fd >= 0 && fd < MAX_FD) {
        skipped[fd] = 0;
        kind[fd] = 0;
    }
    return real_close(fd);
}
