/* SPDX-License-Identifier: MIT */
/* redis-cycle: closed-loop two-command lock cycles on a Redis server for
 * bench/suite.sh, the peer of tenured's acquire -> release cycle.
 *   redis-cycle HOST PORT CONNS SECONDS [del|lua|set]
 * Each of CONNS connections repeats: SET key:N v NX PX 60000, wait for the
 * reply, DEL key:N, wait for the reply, with a new N each cycle (no key is
 * ever reused, like tenured's cycle on unique names).  One thread and one
 * epoll set, like redis-benchmark.  After one second of warm-up it counts
 * completed cycles for SECONDS and prints "cycles N per_s R errors E",
 * where an error is a reply that is not +OK to the SET or :1 to the DEL.
 * Modes (default del):
 *   del  SET key:N v NX PX 60000, then DEL key:N (two commands);
 *   lua  SET key:N <secret> NX PX 60000, then the check-and-delete a
 *        correct Redis lock client runs to release (Redlock, redis-py's
 *        Lock): EVALSHA of "if GET == secret then DEL", the script loaded
 *        once with SCRIPT LOAD; the peer of tenured's acquire -> release;
 *   set  SET key:N v NX PX 60000 only, a new key each time: the peer of
 *        tenured's acquire; a "cycle" is then one SET.
 * It then also prints "commands C" (every reply, warm-up included, for CPU
 * per command from the server's counters over the whole run).
 * Exit 1 when the server cannot be reached. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 1024

struct conn {
    int fd;
    int step;        /* 0: SET sent, 1: DEL sent */
    unsigned long n; /* key number of the cycle */
    char in[256];    /* the reply being read */
    size_t have;     /* bytes of it */
};

static unsigned long next_key;
static int mode;     /* 0 del, 1 lua, 2 set */
static char sha[41]; /* of the check-and-delete script (lua) */

static const char release_lua[] =
    "if redis.call('get',KEYS[1]) == ARGV[1] then "
    "return redis.call('del',KEYS[1]) else return 0 end";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int send_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* One command as a RESP array; replies are tiny, so a blocking write of a
 * request this small never waits in practice. */
static int send_cmd(struct conn *c)
{
    char key[32], val[40], buf[256];
    int kl = snprintf(key, sizeof(key), "key:%lu", c->n);
    /* The lock's secret: 32 hex digits, as tenured's lease_secret. */
    int vl = mode == 1
                 ? snprintf(val, sizeof(val), "%016lx%016lx",
                            c->n * 0x9e3779b97f4a7c15ul, c->n ^ 0x5bd1e995ul)
                 : snprintf(val, sizeof(val), "v");
    int n;
    if (c->step == 0)
        n = snprintf(buf, sizeof(buf),
                     "*6\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$2\r\nNX\r\n"
                     "$2\r\nPX\r\n$5\r\n60000\r\n",
                     kl, key, vl, val);
    else if (mode == 1)
        n = snprintf(buf, sizeof(buf),
                     "*5\r\n$7\r\nEVALSHA\r\n$40\r\n%s\r\n$1\r\n1\r\n"
                     "$%d\r\n%s\r\n$%d\r\n%s\r\n",
                     sha, kl, key, vl, val);
    else
        n = snprintf(buf, sizeof(buf), "*2\r\n$3\r\nDEL\r\n$%d\r\n%s\r\n", kl,
                     key);
    return send_all(c->fd, buf, (size_t)n);
}

static int dial(const char *host, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1 ||
        connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* SCRIPT LOAD the check-and-delete on its own connection; sets sha. */
static int load_script(const char *host, int port)
{
    char buf[512], in[128];
    int fd = dial(host, port);
    if (fd < 0)
        return -1;
    int n = snprintf(buf, sizeof(buf),
                     "*3\r\n$6\r\nSCRIPT\r\n$4\r\nLOAD\r\n$%zu\r\n%s\r\n",
                     sizeof(release_lua) - 1, release_lua);
    size_t have = 0;
    if (send_all(fd, buf, (size_t)n) < 0) {
        close(fd);
        return -1;
    }
    while (have < 47) { /* "$40\r\n" + 40 hex + "\r\n" */
        ssize_t r = read(fd, in + have, sizeof(in) - 1 - have);
        if (r <= 0)
            break;
        have += (size_t)r;
    }
    close(fd);
    if (have < 47 || strncmp(in, "$40\r\n", 5) != 0)
        return -1;
    memcpy(sha, in + 5, 40);
    sha[40] = '\0';
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr,
                "usage: redis-cycle HOST PORT CONNS SECONDS [del|lua|set]\n");
        return 2;
    }
    if (argc == 6) {
        if (strcmp(argv[5], "lua") == 0)
            mode = 1;
        else if (strcmp(argv[5], "set") == 0)
            mode = 2;
        else if (strcmp(argv[5], "del") != 0) {
            fprintf(stderr, "redis-cycle: mode is del, lua or set\n");
            return 2;
        }
    }
    long port = strtol(argv[2], NULL, 10);
    long nconn = strtol(argv[3], NULL, 10);
    double secs = strtod(argv[4], NULL);
    if (port < 1 || port > 65535 || nconn < 1 || nconn > MAX_CONNS ||
        secs <= 0) {
        fprintf(stderr, "redis-cycle: bad CONNS or SECONDS\n");
        return 2;
    }
    static struct conn conns[MAX_CONNS];
    if (mode == 1 && load_script(argv[1], (int)port) < 0) {
        fprintf(stderr, "redis-cycle: SCRIPT LOAD failed\n");
        return 1;
    }
    int ep = epoll_create1(0);
    next_key = (unsigned long)time(NULL) * 1000000ul;
    for (long i = 0; i < nconn; i++) {
        struct conn *c = &conns[i];
        c->fd = dial(argv[1], (int)port);
        if (c->fd < 0) {
            fprintf(stderr, "redis-cycle: cannot connect to %s:%ld\n", argv[1],
                    port);
            return 1;
        }
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        (void)epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
        c->n = next_key++;
        if (send_cmd(c) < 0)
            return 1;
    }
    double start = now_s(), count_from = start + 1.0, end = count_from + secs;
    long cycles = 0, errors = 0, commands = 0;
    struct epoll_event evs[64];
    for (;;) {
        double t = now_s();
        if (t >= end)
            break;
        int n = epoll_wait(ep, evs, 64, 100);
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            ssize_t r = read(c->fd, c->in + c->have, sizeof(c->in) - c->have);
            if (r <= 0) {
                fprintf(stderr, "redis-cycle: connection lost\n");
                return 1;
            }
            c->have += (size_t)r;
            char *eol = memchr(c->in, '\n', c->have);
            if (eol == NULL)
                continue; /* a reply is one line: wait for the rest */
            int ok = c->step == 0 ? strncmp(c->in, "+OK\r\n", 5) == 0
                                  : strncmp(c->in, ":1\r\n", 4) == 0;
            c->have = 0;
            commands++;
            if (!ok)
                errors++;
            if (c->step == 1 || mode == 2) {
                if (now_s() >= count_from)
                    cycles++;
                c->n = next_key++;
            }
            if (mode != 2)
                c->step ^= 1;
            if (send_cmd(c) < 0) {
                fprintf(stderr, "redis-cycle: send failed\n");
                return 1;
            }
        }
    }
    printf("cycles %ld per_s %.0f errors %ld\n", cycles, (double)cycles / secs,
           errors);
    printf("commands %ld\n", commands);
    return 0;
}
