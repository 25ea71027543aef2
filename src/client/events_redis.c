/* SPDX-License-Identifier: MIT */
/* The event follower over a Redis stream (opts.events_url = redis://... or
 * rediss://...?tls_ca=FILE&tls_cert=FILE&tls_key=FILE&tls_sni=NAME&
 * tls_verify=0|1 for TLS, over common/tcp.c; the URL is read as the
 * publisher reads it: common/redis_url.h), the one tenured --publish
 * fills: XREAD BLOCK from the last entry seen,
 * with the same effect as the SSE follower (events.c).  It speaks the few
 * RESP2 commands it needs itself, so that libtenure pulls in no Redis
 * library for programs that never use it; replies are parsed with caps
 * (bulk strings, array lengths, depth) and anything odd drops the
 * connection.  Events may have been missed when a "reset" record comes,
 * or when the records' ids jump (the stream was trimmed, or Redis lost
 * data): then every kept lease is renewed at once.  Repeated ids (the
 * publisher delivers at least once) are skipped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tenure/err.h>

#include "client_internal.h"
#include "common/alloc.h"
#include "common/redis_url.h"
#include "common/tcp.h"

#define RBUF 65536
#define BULK_MAX 4096
#define ARRAY_MAX 1024
#define DEPTH_MAX 6
#define BLOCK_MS 500
#define COUNT 256

struct rnode {
    char type;          /* '+', '-', ':', '$', '*', or 0 for nil */
    long long n;        /* integer, or element count */
    char *str;          /* simple/bulk/error text, NUL-terminated */
    struct rnode *kids; /* n elements of an array */
};

struct rf {
    struct tn_client *c;   /* owner */
    struct tn_redis_url u; /* where: common/redis_url.h */
    struct tn_tcp *conn;   /* connection or NULL */
    char buf[RBUF];        /* received, unparsed */
    size_t len;            /* bytes in buf */
    size_t pos;            /* consumed */
    char last_entry[64];   /* stream entry id to read after */
    uint64_t last_id;      /* last event id applied, 0 none */
};

static void drop(struct rf *f)
{
    tn_tcp_free(f->conn);
    f->conn = NULL;
    f->len = f->pos = 0;
}

static int dial(struct rf *f)
{
    f->len = f->pos = 0;
    /* A reply may take BLOCK_MS; anything far beyond is a dead peer. */
    return tn_tcp_open(f->u.host, f->u.port, 3000, &f->u.tls, &f->conn, NULL);
}

static int send_cmd(struct rf *f, int argc, const char **argv)
{
    char out[2048];
    size_t o = (size_t)snprintf(out, sizeof(out), "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(argv[i]);
        int w =
            snprintf(out + o, sizeof(out) - o, "$%zu\r\n%s\r\n", n, argv[i]);
        if (w < 0 || (size_t)w >= sizeof(out) - o)
            return TN_ETOOBIG;
        o += (size_t)w;
    }
    return tn_tcp_write(f->conn, out, o);
}

/* Make n bytes available at buf+pos; false on error or timeout. */
static bool need(struct rf *f, size_t n)
{
    if (n > RBUF)
        return false;
    while (f->len - f->pos < n) {
        if (f->pos > 0) {
            memmove(f->buf, f->buf + f->pos, f->len - f->pos);
            f->len -= f->pos;
            f->pos = 0;
        }
        ssize_t r = tn_tcp_read(f->conn, f->buf + f->len, RBUF - f->len);
        if (r <= 0)
            return false;
        f->len += (size_t)r;
    }
    return true;
}

/* One CRLF-terminated line at buf+pos (without CRLF); NULL on error. */
static char *line(struct rf *f)
{
    for (size_t want = 3;; want++) {
        if (!need(f, want))
            return NULL;
        char *s = f->buf + f->pos;
        if (s[want - 2] == '\r' && s[want - 1] == '\n') {
            s[want - 2] = '\0';
            f->pos += want;
            return s;
        }
        if (want > 128)
            return NULL;
    }
}

static void rfree(struct rnode *x)
{
    if (x == NULL)
        return;
    for (long long i = 0; x->type == '*' && i < x->n; i++)
        rfree(&x->kids[i]);
    tn_free(x->kids);
    tn_free(x->str);
    x->kids = NULL;
    x->str = NULL;
}

static bool parse(struct rf *f, struct rnode *x, int depth)
{
    memset(x, 0, sizeof(*x));
    char *l = line(f);
    if (l == NULL || depth > DEPTH_MAX)
        return false;
    char t = l[0];
    char *end = NULL;
    switch (t) {
    case '+':
    case '-':
        x->type = t;
        x->str = tn_strdup(l + 1);
        return x->str != NULL;
    case ':':
        x->type = t;
        x->n = strtoll(l + 1, &end, 10);
        return *end == '\0';
    case '$': {
        long long n = strtoll(l + 1, &end, 10);
        if (*end != '\0' || n > BULK_MAX || n < -1)
            return false;
        if (n == -1)
            return true; /* nil */
        if (!need(f, (size_t)n + 2))
            return false;
        x->type = t;
        x->n = n;
        x->str = tn_strndup(f->buf + f->pos, (size_t)n);
        f->pos += (size_t)n + 2;
        return x->str != NULL;
    }
    case '*': {
        long long n = strtoll(l + 1, &end, 10);
        if (*end != '\0' || n > ARRAY_MAX || n < -1)
            return false;
        if (n == -1)
            return true;
        x->type = t;
        x->kids = tn_calloc(n > 0 ? (size_t)n : 1, sizeof(*x->kids));
        if (x->kids == NULL)
            return false;
        x->n = n;
        for (long long i = 0; i < n; i++) {
            if (!parse(f, &x->kids[i], depth + 1)) {
                x->n = i + 1;
                return false;
            }
        }
        return true;
    }
    default:
        return false;
    }
}

/* Run a command; true if the reply is not an error (stored in *out when
 * out is not NULL, else freed). */
static bool call(struct rf *f, int argc, const char **argv, struct rnode *out)
{
    struct rnode tmp;
    struct rnode *x = out != NULL ? out : &tmp;
    bool ok = send_cmd(f, argc, argv) == 0 && parse(f, x, 0) && x->type != '-';
    if (!ok || out == NULL)
        rfree(x);
    return ok;
}

static const char *field(const struct rnode *kv, const char *key)
{
    for (long long i = 0; i + 1 < kv->n; i += 2) {
        if (kv->kids[i].type == '$' && strcmp(kv->kids[i].str, key) == 0)
            return kv->kids[i + 1].type == '$' ? kv->kids[i + 1].str : NULL;
    }
    return NULL;
}

static bool setup(struct rf *f)
{
    const struct tn_redis_url *u = &f->u;
    if (u->password[0] != '\0') {
        const char *a2[] = {"AUTH", u->password};
        const char *a3[] = {"AUTH", u->user, u->password};
        if (!(u->user[0] != '\0' ? call(f, 3, a3, NULL) : call(f, 2, a2, NULL)))
            return false;
    }
    if (u->db >= 0) {
        char db[16];
        (void)snprintf(db, sizeof(db), "%d", u->db);
        const char *a[] = {"SELECT", db};
        if (!call(f, 2, a, NULL))
            return false;
    }
    if (f->last_entry[0] != '\0')
        return true;
    /* The first time: start after the newest entry, like a new SSE
     * subscriber; "$" on every XREAD would lose what comes in between. */
    const char *a[] = {"XREVRANGE", f->u.stream, "+", "-", "COUNT", "1"};
    struct rnode r;
    if (!call(f, 6, a, &r))
        return false;
    bool ok = r.type == '*';
    const char *id = "0-0";
    if (ok && r.n == 1 && r.kids[0].type == '*' && r.kids[0].n == 2 &&
        r.kids[0].kids[0].type == '$' && r.kids[0].kids[1].type == '*') {
        id = r.kids[0].kids[0].str;
        /* Its event id too, so that a jump is seen from the first event. */
        const char *ev = field(&r.kids[0].kids[1], "id");
        f->last_id = ev != NULL ? strtoull(ev, NULL, 10) : 0;
    }
    (void)snprintf(f->last_entry, sizeof(f->last_entry), "%s", id);
    rfree(&r);
    return ok;
}

/* One stream entry [id, [k, v, ...]]. */
static void entry(struct rf *f, const struct rnode *e)
{
    if (e->type != '*' || e->n != 2 || e->kids[0].type != '$' ||
        e->kids[1].type != '*')
        return;
    (void)snprintf(f->last_entry, sizeof(f->last_entry), "%s", e->kids[0].str);
    const struct rnode *kv = &e->kids[1];
    const char *ids = field(kv, "id"), *type = field(kv, "type");
    const char *name = field(kv, "name"), *tok = field(kv, "token");
    if (ids == NULL || type == NULL)
        return;
    uint64_t id = strtoull(ids, NULL, 10);
    if (f->last_id != 0 && id <= f->last_id)
        return; /* delivered again */
    bool gap = f->last_id != 0 && id != f->last_id + 1;
    f->last_id = id;
    if (gap || strcmp(type, "reset") == 0) {
        tn_client_events_renew_all(f->c);
        if (strcmp(type, "reset") == 0)
            return;
    }
    const char *sid = field(kv, "session_id");
    if (sid != NULL)
        tn_client_events_apply_session(f->c, type, sid);
    else if (name != NULL && tok != NULL)
        tn_client_events_apply(f->c, type, name, strtoull(tok, NULL, 10));
}

/* One XREAD round; false when the connection must go. */
static bool read_once(struct rf *f)
{
    char count[16], block[16];
    (void)snprintf(count, sizeof(count), "%d", COUNT);
    (void)snprintf(block, sizeof(block), "%d", BLOCK_MS);
    const char *a[] = {"XREAD", "COUNT",   count,       "BLOCK",
                       block,   "STREAMS", f->u.stream, f->last_entry};
    struct rnode r;
    if (!call(f, 8, a, &r))
        return false;
    /* nil on timeout, else [[key, [entry...]]] */
    if (r.type == '*' && r.n >= 1 && r.kids[0].type == '*' &&
        r.kids[0].n == 2 && r.kids[0].kids[1].type == '*') {
        const struct rnode *es = &r.kids[0].kids[1];
        for (long long i = 0; i < es->n; i++)
            entry(f, &es->kids[i]);
    }
    rfree(&r);
    return true;
}

bool tn_client_events_redis_url_ok(const char *url)
{
    struct tn_redis_url u;
    return strlen(url) <= 1000 && tn_redis_url_parse(url, &u) == 0;
}

void *tn_client_events_redis_main(void *arg)
{
    struct tn_client *c = arg;
    struct rf *f = tn_calloc(1, sizeof(*f));
    if (f == NULL || tn_redis_url_parse(c->events_url, &f->u) < 0) {
        tn_free(f);
        return NULL;
    }
    f->c = c;
    while (!atomic_load(&c->abort_io)) {
        if (f->conn == NULL) {
            /* Back after an outage it reads on from last_entry, so it
             * misses nothing the stream still holds. */
            if (dial(f) < 0 || !setup(f)) {
                drop(f);
                struct timespec ts = {.tv_sec = 0, .tv_nsec = 200000000L};
                (void)nanosleep(&ts, NULL);
                continue;
            }
        }
        if (!read_once(f))
            drop(f);
    }
    drop(f);
    tn_free(f);
    return NULL;
}
