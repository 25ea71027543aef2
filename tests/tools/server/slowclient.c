/* SPDX-License-Identifier: MIT */
/* tn-slowclient: misbehaving HTTP clients for the limit tests, on raw
 * sockets to 127.0.0.1.  A test helper only.
 *
 *   tn-slowclient idle  PORT CONNS HOLD_MS
 *       open CONNS connections, send nothing, watch them for HOLD_MS
 *   tn-slowclient drip  PORT CONNS HOLD_MS INTERVAL_MS
 *       open CONNS connections, each sending a request one byte every
 *       INTERVAL_MS, never finishing it within HOLD_MS
 *   tn-slowclient raw   PORT [TIMEOUT_MS]
 *       send stdin as is, print what comes back until EOF or the timeout
 *
 * idle and drip print one line: "conns=N connected=C closed=K responded=R
 * max_close_ms=M" where closed counts connections the server ended (EOF or
 * reset) and max_close_ms is the longest connect-to-close time among them. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"

#define SC_MAX_CONNS 1000

struct sc_conn {
    int fd;             /* -1 when not connected or done */
    long long open_ms;  /* CLOCK_MONOTONIC ms at connect */
    long long close_ms; /* when the server ended it, 0 while open */
    size_t sent;        /* bytes of the drip request sent */
    int responded;      /* the server sent bytes */
};

static const char drip_head[] = "POST /v1/leases HTTP/1.1\r\n"
                                "Host: 127.0.0.1\r\n"
                                "Content-Type: application/json\r\n"
                                "Content-Length: 4000\r\n\r\n"
                                "{\"name\":\"drip\",\"owner_id\":\"d\",";

static int dial(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    struct timeval tv = {.tv_sec = 1};
    if (fd < 0)
        return -1;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        (void)close(fd);
        return -1;
    }
    return fd;
}

static long parse_arg(const char *s)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    return end == s || *end != '\0' ? -1 : v;
}

/* Read what the server sent; 1 when the connection has ended. */
static int drain(struct sc_conn *c)
{
    char buf[4096];
    ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
        c->responded = 1;
        return 0;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    return 1;
}

static void drip_one(struct sc_conn *c)
{
    char b = 'x';
    if (c->sent < sizeof drip_head - 1)
        b = drip_head[c->sent];
    /* A send error means the server ended the connection. */
    if (send(c->fd, &b, 1, MSG_NOSIGNAL) == 1)
        c->sent++;
}

static void watch(struct sc_conn *cs, long n, long hold_ms, long interval_ms)
{
    struct pollfd pf[SC_MAX_CONNS];
    long long start = (long long)tn_clock_mono_ms();
    long long next_drip = start;
    for (long long now = start; now < start + hold_ms;
         now = (long long)tn_clock_mono_ms()) {
        for (long i = 0; i < n; i++)
            pf[i] = (struct pollfd){.fd = cs[i].fd, .events = POLLIN};
        (void)poll(pf, (nfds_t)n, 10);
        now = (long long)tn_clock_mono_ms();
        for (long i = 0; i < n; i++) {
            if (cs[i].fd < 0 || (pf[i].revents == 0))
                continue;
            if (drain(&cs[i])) {
                cs[i].close_ms = now;
                (void)close(cs[i].fd);
                cs[i].fd = -1;
            }
        }
        if (interval_ms > 0 && now >= next_drip) {
            next_drip = now + interval_ms;
            for (long i = 0; i < n; i++)
                if (cs[i].fd >= 0)
                    drip_one(&cs[i]);
        }
    }
}

static int run_many(int port, long n, long hold_ms, long interval_ms)
{
    struct sc_conn cs[SC_MAX_CONNS];
    long connected = 0;
    long closed = 0;
    long responded = 0;
    long long max_close = 0;
    if (n < 1 || n > SC_MAX_CONNS || hold_ms < 0)
        return 2;
    for (long i = 0; i < n; i++) {
        cs[i] = (struct sc_conn){.fd = dial(port)};
        cs[i].open_ms = (long long)tn_clock_mono_ms();
        connected += cs[i].fd >= 0;
    }
    watch(cs, n, hold_ms, interval_ms);
    for (long i = 0; i < n; i++) {
        responded += cs[i].responded;
        if (cs[i].close_ms > 0) {
            closed++;
            long long d = cs[i].close_ms - cs[i].open_ms;
            max_close = d > max_close ? d : max_close;
        }
        if (cs[i].fd >= 0)
            (void)close(cs[i].fd);
    }
    (void)printf("conns=%ld connected=%ld closed=%ld responded=%ld "
                 "max_close_ms=%lld\n",
                 n, connected, closed, responded, max_close);
    return 0;
}

static int run_raw(int port, long timeout_ms)
{
    static char req[1 << 20];
    size_t len = fread(req, 1, sizeof req, stdin);
    int fd = dial(port);
    if (fd < 0) {
        perror("tn-slowclient: connect");
        return 1;
    }
    for (size_t off = 0; off < len;) {
        ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (n <= 0)
            break; /* the server may answer and close before reading all */
        off += (size_t)n;
    }
    long long end = (long long)tn_clock_mono_ms() + timeout_ms;
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        long long left = end - (long long)tn_clock_mono_ms();
        if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
            break;
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            break;
        (void)fwrite(buf, 1, (size_t)n, stdout);
    }
    (void)close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    (void)signal(SIGPIPE, SIG_IGN);
    if (argc >= 3 && strcmp(argv[1], "raw") == 0)
        return run_raw((int)parse_arg(argv[2]),
                       argc > 3 ? parse_arg(argv[3]) : 3000);
    if (argc == 5 && strcmp(argv[1], "idle") == 0)
        return run_many((int)parse_arg(argv[2]), parse_arg(argv[3]),
                        parse_arg(argv[4]), 0);
    if (argc == 6 && strcmp(argv[1], "drip") == 0)
        return run_many((int)parse_arg(argv[2]), parse_arg(argv[3]),
                        parse_arg(argv[4]), parse_arg(argv[5]));
    (void)fputs("usage: tn-slowclient idle PORT CONNS HOLD_MS | drip PORT "
                "CONNS HOLD_MS INTERVAL_MS | raw PORT [TIMEOUT_MS]\n",
                stderr);
    return 2;
}
