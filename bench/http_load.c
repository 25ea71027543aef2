/* SPDX-License-Identifier: MIT */
/* http_load: see http_load.h. */
#include "http_load.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct hl *the_hl; /* hl_send's, to ask for EPOLLOUT */

static void *grow(void *p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return p;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    p = realloc(p, c);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    *cap = c;
    return p;
}

int64_t hl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t hl_self_cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((int64_t)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

static int connect_one(const char *host, int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 &&
        errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

int hl_open(struct hl *h, const char *url, int n)
{
    memset(h, 0, sizeof(*h));
    if (sscanf(url, "http://%63[^:]:%d", h->host, &h->port) != 2) {
        fprintf(stderr, "bad url %s (http://HOST:PORT)\n", url);
        return -1;
    }
    h->ep = epoll_create1(0);
    the_hl = h;
    h->conns = calloc((size_t)n, sizeof(*h->conns));
    h->n = n;
    for (int i = 0; i < n; i++) {
        struct hl_conn *c = &h->conns[i];
        c->idx = i;
        c->fd = connect_one(h->host, h->port);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (c->fd < 0 || epoll_ctl(h->ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
            fprintf(stderr, "connect %s: %s\n", url, strerror(errno));
            return -1;
        }
    }
    return 0;
}

void hl_close(struct hl *h)
{
    for (int i = 0; i < h->n; i++) {
        close(h->conns[i].fd);
        free(h->conns[i].in);
        free(h->conns[i].out);
        free(h->conns[i].body);
    }
    free(h->conns);
    close(h->ep);
}

static void want_out(struct hl *h, struct hl_conn *c, bool on)
{
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0),
                             .data.ptr = c};
    epoll_ctl(h->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void flush(struct hl_conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t w = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w < 0 && errno != EAGAIN)
                c->out_off = c->out_len; /* the read will see it fail */
            break;
        }
        c->out_off += (size_t)w;
    }
    bool on = c->out_off < c->out_len;
    if (the_hl != NULL && on != c->pollout) {
        want_out(the_hl, c, on);
        c->pollout = on;
    }
}

void hl_send(struct hl_conn *c, const char *method, const char *path,
             const char *body, size_t len, hl_done_fn *done, long tag)
{
    char head[512];
    int k = snprintf(head, sizeof(head),
                     "%s %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: "
                     "application/json\r\nContent-Length: %zu\r\n\r\n",
                     method, path, the_hl->host, the_hl->port, len);
    c->out = grow(c->out, &c->out_cap, (size_t)k + len);
    memcpy(c->out, head, (size_t)k);
    if (len > 0)
        memcpy(c->out + k, body, len);
    c->out_len = (size_t)k + len;
    c->out_off = 0;
    c->busy = true;
    c->done = done;
    c->tag = tag;
    c->in_have = 0;
    c->sent_ns = hl_now_ns();
    flush(c);
}

/* Decodes a chunked body starting at p (end e) into c->body; the bytes it
 * took, 0 when incomplete, -1 on nonsense. */
static long unchunk(struct hl_conn *c, const char *p, const char *e)
{
    const char *s = p;
    c->body_len = 0;
    for (;;) {
        const char *nl = memmem(s, (size_t)(e - s), "\r\n", 2);
        if (nl == NULL)
            return 0;
        char *end;
        unsigned long n = strtoul(s, &end, 16);
        if (end == s)
            return -1;
        s = nl + 2;
        if ((size_t)(e - s) < n + 2)
            return 0;
        c->body = grow(c->body, &c->body_cap, c->body_len + n + 1);
        memcpy(c->body + c->body_len, s, n);
        c->body_len += n;
        s += n + 2;
        if (n == 0)
            return s - p;
    }
}

/* Whether c->in holds a whole answer; fills c->body and returns its status,
 * 0 while incomplete, -1 on nonsense. */
static int parse(struct hl_conn *c)
{
    c->in = grow(c->in, &c->in_cap, c->in_have + 1);
    c->in[c->in_have] = '\0';
    char *he = strstr(c->in, "\r\n\r\n");
    if (he == NULL)
        return 0;
    int status = 0;
    if (sscanf(c->in, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    const char *b = he + 4, *e = c->in + c->in_have;
    bool chunked = false;
    long clen = -1;
    for (char *l = strstr(c->in, "\r\n") + 2; l < he;
         l = strstr(l, "\r\n") + 2) {
        if (strncasecmp(l, "content-length:", 15) == 0)
            clen = strtol(l + 15, NULL, 10);
        else if (strncasecmp(l, "transfer-encoding:", 18) == 0 &&
                 strstr(l, "chunked") != NULL && strstr(l, "chunked") < he)
            chunked = true;
    }
    if (chunked) {
        long took = unchunk(c, b, e);
        if (took <= 0)
            return (int)took;
    } else {
        if (clen < 0)
            clen = 0;
        if (e - b < clen)
            return 0;
        c->body = grow(c->body, &c->body_cap, (size_t)clen + 1);
        memcpy(c->body, b, (size_t)clen);
        c->body_len = (size_t)clen;
    }
    c->body[c->body_len] = '\0';
    return status;
}

static void finish(struct hl_conn *c, int status)
{
    c->busy = false;
    c->status = status < 0 ? 0 : status;
    c->in_have = 0;
    if (status <= 0) {
        c->body = grow(c->body, &c->body_cap, 1);
        c->body[0] = '\0';
        c->body_len = 0;
    }
    if (c->done != NULL)
        c->done(c, status < 0 ? 0 : status);
}

static void reopen(struct hl_conn *c)
{
    epoll_ctl(the_hl->ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = connect_one(the_hl->host, the_hl->port);
    c->pollout = false;
    c->in_have = 0;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (c->fd < 0 || epoll_ctl(the_hl->ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
        fprintf(stderr, "reconnect: %s\n", strerror(errno));
        exit(2);
    }
}

static void on_readable(struct hl_conn *c)
{
    for (;;) {
        c->in = grow(c->in, &c->in_cap, c->in_have + 65536);
        ssize_t r = read(c->fd, c->in + c->in_have, c->in_cap - c->in_have - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return;
        if (r <= 0 && !c->busy) {
            reopen(c); /* an idle keep-alive the server closed (its
                        * --request-timeout-ms): opened again, as any
                        * client's pool does */
            return;
        }
        if (r <= 0) {
            fprintf(stderr, "connection %d closed by the server\n", c->idx);
            exit(2);
        }
        c->in_have += (size_t)r;
        int st = parse(c);
        if (st != 0 && c->busy) {
            finish(c, st);
            return;
        }
    }
}

void hl_poll(struct hl *h, int timeout_ms)
{
    struct epoll_event ev[64];
    the_hl = h;
    int n = epoll_wait(h->ep, ev, 64, timeout_ms);
    for (int i = 0; i < n; i++) {
        struct hl_conn *c = ev[i].data.ptr;
        if (ev[i].events & EPOLLOUT)
            flush(c);
        if (ev[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
            on_readable(c);
    }
}

int hl_call(struct hl *h, struct hl_conn *c, const char *method,
            const char *path, const char *body)
{
    the_hl = h;
    hl_send(c, method, path, body, body ? strlen(body) : 0, NULL, 0);
    while (c->busy)
        hl_poll(h, 100);
    return c->status;
}

void hl_str_add(struct hl_str *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    s->p = grow(s->p, &s->cap, s->len + (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s->p + s->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    s->len += (size_t)n;
}

void hl_str_free(struct hl_str *s)
{
    free(s->p);
    memset(s, 0, sizeof(*s));
}

static int64_t read_schedstat(const char *path)
{
    FILE *f = fopen(path, "r");
    long long run = -1;
    if (f == NULL)
        return -1;
    if (fscanf(f, "%lld", &run) != 1)
        run = -1;
    fclose(f);
    return run;
}

/* The fields of /proc/PID/stat that follow the command name (which may
 * hold spaces and parentheses), read into buf; NULL when unreadable. */
static const char *stat_fields(const char *pid, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%s/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    return p != NULL && p[1] == ' ' ? p + 2 : NULL;
}

/* utime + stime of a process from its stat, ns. */
static int64_t stat_ns(pid_t pid)
{
    char id[24], buf[1024];
    snprintf(id, sizeof(id), "%d", (int)pid);
    const char *p = stat_fields(id, buf, sizeof(buf));
    unsigned long long ut = 0, st = 0;
    if (p == NULL ||
        sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
               &st) != 2)
        return 0;
    return (int64_t)((ut + st) * (1000000000ULL /
                                  (unsigned long long)sysconf(_SC_CLK_TCK)));
}

/* Every thread's run time of one process, ns. */
static int64_t proc_ns(pid_t pid)
{
    char path[320];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return 0;
    int64_t sum = 0;
    bool any = false;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat", (int)pid,
                 e->d_name);
        int64_t v = read_schedstat(path);
        if (v >= 0) {
            sum += v;
            any = true;
        }
    }
    closedir(d);
    return any ? sum : stat_ns(pid);
}

static pid_t parent_of(const char *pid)
{
    char buf[512];
    const char *p = stat_fields(pid, buf, sizeof(buf));
    int ppid = 0;
    if (p == NULL || sscanf(p, "%*c %d", &ppid) != 1)
        return 0;
    return ppid;
}

int64_t hl_cpu_ns(pid_t pid, bool tree)
{
    if (pid <= 0)
        return 0;
    int64_t sum = proc_ns(pid);
    if (!tree)
        return sum;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (isdigit((unsigned char)e->d_name[0]) && parent_of(e->d_name) == pid)
            sum += proc_ns((pid_t)strtol(e->d_name, NULL, 10));
    }
    if (d != NULL)
        closedir(d);
    return sum;
}

static const char *find_key(const char *text, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof(pat), "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (p == NULL)
        return NULL;
    p += strlen(pat);
    while (*p == ' ')
        p++;
    return p;
}

bool hl_json_str(const char *text, const char *key, char *out, size_t cap)
{
    const char *p = find_key(text, key);
    if (p == NULL || *p != '"')
        return false;
    p++;
    size_t n = 0;
    while (p[n] != '\0' && p[n] != '"')
        n++;
    if (n >= cap)
        return false;
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

long long hl_json_num(const char *text, const char *key)
{
    const char *p = find_key(text, key);
    if (p == NULL)
        return -1;
    if (*p == '"')
        p++;
    if (*p != '-' && !isdigit((unsigned char)*p))
        return -1;
    return strtoll(p, NULL, 10);
}

size_t hl_count(const char *text, const char *needle)
{
    size_t n = 0, k = strlen(needle);
    for (const char *p = strstr(text, needle); p != NULL;
         p = strstr(p + k, needle))
        n++;
    return n;
}

void hl_b64(const char *s, size_t len, char *out)
{
    (void)sodium_bin2base64(
        out, sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL),
        (const unsigned char *)s, len, sodium_base64_VARIANT_ORIGINAL);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int64_t hl_quantile(int64_t *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp64);
    size_t k = (size_t)(q * (double)n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}
