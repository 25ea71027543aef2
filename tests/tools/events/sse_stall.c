/* SPDX-License-Identifier: MIT */
/* tn-sse-stall PORT MS: open GET /v1/events on 127.0.0.1:PORT with a tiny
 * receive buffer, never read for MS milliseconds, then print "closed" if
 * the server has cut the stream (EOF or reset once we drain) or "open"
 * (nothing more came for DRAIN_MS: a generous bound, since a server under
 * a sanitizer on a loaded machine may take seconds to send its last
 * words once the socket has room again).
 * A test helper for the slow-consumer rule only. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_MS 10000

static int drain_until_eof(int fd, int timeout_ms)
{
    char buf[65536];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    for (;;) {
        if (poll(&p, 1, timeout_ms) <= 0)
            return 0; /* still open, nothing more */
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0)
            return 1; /* EOF or reset: the server cut us */
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        (void)fprintf(stderr, "usage: tn-sse-stall PORT MS\n");
        return 2;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port =
                                 htons((uint16_t)strtol(argv[1], NULL, 10))};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        perror("connect");
        return 1;
    }
    static const char req[] =
        "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1))
        return 1;
    long ms = strtol(argv[2], NULL, 10);
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (ms % 1000) * 1000000};
    (void)nanosleep(&ts, NULL);
    (void)printf("%s\n", drain_until_eof(fd, DRAIN_MS) ? "closed" : "open");
    (void)close(fd);
    return 0;
}
