/* SPDX-License-Identifier: MIT */
/* floor: the physical floor under one durable request on this machine,
 * the costs no server can avoid (docs/PERFORMANCE.md "Budget per
 * request").
 *   floor DIR [ROUNDS]
 * 1. One read + one write on a warm loopback TCP socket: a server thread
 *    blocks in read() for a 150-byte request and write()s a 200-byte
 *    answer; a client thread sends the next request when it has the
 *    answer.  ROUNDS (default 20000) round trips after 1000 of warm-up.
 *    Prints the server thread's CPU (user, system; getrusage of the
 *    thread) per round trip and the round trip's wall time.  The CPU
 *    includes going to sleep in read() and being woken, as a server's
 *    epoll_wait would.
 * 2. One fdatasync of a 256-byte append to a file in DIR (the file system
 *    the data dir lives on), 200 times after 10 of warm-up: wall time and
 *    the thread's CPU per fdatasync.  A server shares one per batch.
 * All figures as "floor: <what> <value> <unit>" lines. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define REQ_LEN 150
#define ANS_LEN 200
#define WARM 1000

struct peer {
    int fd;
    long rounds;
    double user_us, sys_us;
};

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void thread_cpu(double *user_us, double *sys_us)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    *user_us = (double)ru.ru_utime.tv_sec * 1e6 + (double)ru.ru_utime.tv_usec;
    *sys_us = (double)ru.ru_stime.tv_sec * 1e6 + (double)ru.ru_stime.tv_usec;
}

/* Reads exactly len bytes (a loopback peer may split them); 0 or -1. */
static int read_full(int fd, char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 0;
}

static void *serve(void *arg)
{
    struct peer *p = arg;
    char req[REQ_LEN], ans[ANS_LEN];
    double u0 = 0, s0 = 0, u1, s1;
    memset(ans, 'a', sizeof(ans));
    for (long i = 0; i < WARM + p->rounds; i++) {
        if (i == WARM)
            thread_cpu(&u0, &s0);
        if (read_full(p->fd, req, sizeof(req)) < 0 ||
            write(p->fd, ans, sizeof(ans)) != ANS_LEN)
            return NULL;
    }
    thread_cpu(&u1, &s1);
    p->user_us = u1 - u0;
    p->sys_us = s1 - s0;
    return NULL;
}

static int socket_floor(long rounds)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    int one = 1, lfd = socket(AF_INET, SOCK_STREAM, 0),
        cfd = socket(AF_INET, SOCK_STREAM, 0);
    struct peer p = {.rounds = rounds};
    char req[REQ_LEN], ans[ANS_LEN];
    pthread_t th;
    double t0 = 0;
    if (lfd < 0 || cfd < 0 || bind(lfd, (struct sockaddr *)&sa, sl) < 0 ||
        listen(lfd, 1) < 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &sl) < 0 ||
        connect(cfd, (struct sockaddr *)&sa, sl) < 0 ||
        (p.fd = accept(lfd, NULL, NULL)) < 0) {
        perror("floor: loopback");
        return -1;
    }
    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(p.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    memset(req, 'r', sizeof(req));
    pthread_create(&th, NULL, serve, &p);
    for (long i = 0; i < WARM + rounds; i++) {
        if (i == WARM)
            t0 = now_us();
        if (write(cfd, req, sizeof(req)) != REQ_LEN ||
            read_full(cfd, ans, sizeof(ans)) < 0)
            break;
    }
    double wall = now_us() - t0;
    pthread_join(th, NULL);
    printf("floor: read+write server CPU %.2f us (user %.2f, system %.2f) per "
           "round trip\n",
           (p.user_us + p.sys_us) / (double)rounds, p.user_us / (double)rounds,
           p.sys_us / (double)rounds);
    printf("floor: read+write round trip %.2f us wall\n",
           wall / (double)rounds);
    close(cfd);
    close(p.fd);
    close(lfd);
    return 0;
}

static int sync_floor(const char *dir)
{
    char path[4096], rec[256];
    const int n = 200;
    double t0 = 0, u0 = 0, s0 = 0, u1, s1;
    snprintf(path, sizeof(path), "%s/floor-journal", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror("floor: open");
        return -1;
    }
    memset(rec, 'j', sizeof(rec));
    for (int i = 0; i < 10 + n; i++) {
        if (i == 10) {
            t0 = now_us();
            thread_cpu(&u0, &s0);
        }
        if (write(fd, rec, sizeof(rec)) != (ssize_t)sizeof(rec) ||
            fdatasync(fd) < 0) {
            perror("floor: append");
            close(fd);
            return -1;
        }
    }
    double wall = now_us() - t0;
    thread_cpu(&u1, &s1);
    printf("floor: write+fdatasync %.1f us wall, CPU %.2f us (user %.2f, "
           "system %.2f) each\n",
           wall / n, (u1 - u0 + s1 - s0) / n, (u1 - u0) / n, (s1 - s0) / n);
    close(fd);
    unlink(path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: floor DIR [ROUNDS]\n");
        return 2;
    }
    long rounds = argc > 2 ? strtol(argv[2], NULL, 10) : 20000;
    if (rounds <= 0)
        rounds = 20000;
    return socket_floor(rounds) < 0 || sync_floor(argv[1]) < 0 ? 1 : 0;
}
