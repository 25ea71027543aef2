/* SPDX-License-Identifier: MIT */
/* The Redis Streams target: redis://[USER:PASS@]HOST[:PORT][/DB]/STREAM,
 * read as the followers read it (common/redis_url.h).
 * Each record becomes one XADD STREAM [MAXLEN ~ N] * id .. type .. name ..
 * owner_id .. token .. floor .. at_ms .. (a session's: id .. type ..
 * session_id .. owner_id .. [reason ..] at_ms ..), pipelined per batch;
 * an entry counts as taken when its reply is an entry id (Redis then has it in
 * memory and in its AOF as configured: durability is the server's
 * setting).  Options: redis.password, redis.user, redis.timeout_ms, and
 * for rediss:// redis.tls_ca, redis.tls_cert, redis.tls_key,
 * redis.tls_sni, redis.tls_verify (or the URL's ?tls_KEY=VALUE&...).  Debian
 * 12's hiredis (0.14) has no TLS, so hiredis only formats the commands and
 * parses the replies; the connection, plain or TLS, is common/tcp.c's. */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/redis_url.h"
#include "common/tcp.h"
#include "target.h"

struct redis_target {
    struct tn_redis_url u; /* where (common/redis_url.h), with the
                              redis.* options applied */
    int64_t timeout_ms;    /* connect and each reply */
    uint64_t maxlen;       /* MAXLEN ~, 0 none */
    struct tn_tcp *c;      /* connection or NULL */
    redisReader *rd;       /* replies of c, NULL with it */
    struct tn_buf out;     /* commands of one batch, formatted */
};

static int apply_opts(struct redis_target *r,
                      const struct tn_pub_target_opts *o, struct tn_errmsg *em)
{
    for (size_t i = 0; i < o->n_kv; i++) {
        const char *kv = o->kv[i];
        if (strncmp(kv, "redis.", 6) != 0)
            continue;
        const char *eq = strchr(kv, '=');
        if (eq == NULL)
            goto bad;
        size_t klen = (size_t)(eq - kv);
        const char *v = eq + 1;
        if (klen == 14 && strncmp(kv, "redis.password", klen) == 0 &&
            strlen(v) < sizeof(r->u.password)) {
            memcpy(r->u.password, v, strlen(v) + 1);
        } else if (klen == 10 && strncmp(kv, "redis.user", klen) == 0 &&
                   strlen(v) < sizeof(r->u.user)) {
            memcpy(r->u.user, v, strlen(v) + 1);
        } else if (klen == 16 && strncmp(kv, "redis.timeout_ms", klen) == 0) {
            char *end = NULL;
            long long ms = strtoll(v, &end, 10);
            if (end == v || *end != '\0' || ms < 10 || ms > 600000)
                goto bad;
            r->timeout_ms = ms;
        } else if (klen > 10 && strncmp(kv, "redis.tls_", 10) == 0 &&
                   klen < 32) {
            char key[32];
            (void)snprintf(key, sizeof(key), "%.*s", (int)klen - 6, kv + 6);
            if (!r->u.tls.on || tn_tcp_tls_set(&r->u.tls, key, v) < 0)
                goto bad;
        } else {
            goto bad;
        }
        continue;
    bad:
        tn_errmsg_set(em,
                      "--publish-opt \"%s\": Redis takes redis.password, "
                      "redis.user, redis.timeout_ms (10..600000), and with "
                      "rediss:// redis.tls_ca, redis.tls_cert, redis.tls_key, "
                      "redis.tls_sni, redis.tls_verify (0 or 1)",
                      kv);
        return TN_EINVAL;
    }
    return TN_OK;
}

static int redis_open(const char *url, const struct tn_pub_target_opts *o,
                      void **out, struct tn_errmsg *em)
{
    struct redis_target *r = tn_calloc(1, sizeof(*r));
    if (r == NULL)
        return TN_ENOMEM;
    r->timeout_ms = 2000;
    r->maxlen = o->maxlen;
    tn_buf_init(&r->out, 16u << 20);
    int rc = tn_redis_url_parse(url, &r->u);
    if (rc < 0)
        tn_errmsg_set(em, "--publish: expected redis[s]://[USER:PASS@]HOST"
                          "[:PORT][/DB]/STREAM[?tls_KEY=VALUE&...]");
    if (rc == 0)
        rc = apply_opts(r, o, em);
    if (rc < 0) {
        tn_free(r);
        return rc;
    }
    *out = r;
    return TN_OK;
}

static void disconnect(struct redis_target *r)
{
    tn_tcp_free(r->c);
    r->c = NULL;
    if (r->rd != NULL)
        redisReaderFree(r->rd);
    r->rd = NULL;
}

/* Format one command onto the batch. */
static int append(struct redis_target *r, int argc, const char **argv)
{
    char *cmd = NULL;
    int n = redisFormatCommandArgv(&cmd, argc, argv, NULL);
    if (n < 0)
        return TN_ENOMEM;
    int rc = tn_buf_append(&r->out, cmd, (size_t)n);
    redisFreeCommand(cmd);
    return rc;
}

/* Send the batch formatted so far. */
static int flush(struct redis_target *r, struct tn_errmsg *em)
{
    int rc = tn_tcp_write(r->c, r->out.data, r->out.len);
    tn_buf_reset(&r->out);
    if (rc < 0)
        tn_errmsg_set(em, "write to %s:%d failed", r->u.host, r->u.port);
    return rc;
}

/* The next reply (the caller frees it); NULL when the connection failed. */
static redisReply *reply(struct redis_target *r, struct tn_errmsg *em)
{
    for (;;) {
        void *rep = NULL;
        if (redisReaderGetReply(r->rd, &rep) != REDIS_OK) {
            tn_errmsg_set(em, "reply: %s", r->rd->errstr);
            return NULL;
        }
        if (rep != NULL)
            return rep;
        char buf[16384];
        ssize_t n = tn_tcp_read(r->c, buf, sizeof(buf));
        if (n <= 0) {
            tn_errmsg_set(em, "read from %s:%d: %s", r->u.host, r->u.port,
                          n == 0 ? "closed" : "failed or timed out");
            return NULL;
        }
        if (redisReaderFeed(r->rd, buf, (size_t)n) != REDIS_OK)
            return NULL;
    }
}

/* Run one command and check its reply is not an error. */
static int command_ok(struct redis_target *r, int argc, const char **argv,
                      struct tn_errmsg *em)
{
    int rc = append(r, argc, argv);
    if (rc == 0)
        rc = flush(r, em);
    redisReply *rep = rc == 0 ? reply(r, em) : NULL;
    if (rep == NULL)
        return TN_EUNAVAIL;
    rc = rep->type == REDIS_REPLY_ERROR ? TN_EUNAVAIL : TN_OK;
    if (rc < 0)
        tn_errmsg_set(em, "%s: %.200s", argv[0], rep->str);
    freeReplyObject(rep);
    return rc;
}

static int connect_to(struct redis_target *r, struct tn_errmsg *em)
{
    int rc =
        tn_tcp_open(r->u.host, r->u.port, r->timeout_ms, &r->u.tls, &r->c, em);
    if (rc < 0)
        return TN_EUNAVAIL;
    r->rd = redisReaderCreate();
    if (r->rd == NULL) {
        disconnect(r);
        return TN_ENOMEM;
    }
    if (r->u.password[0] != '\0') {
        const char *a1[] = {"AUTH", r->u.password};
        const char *a2[] = {"AUTH", r->u.user, r->u.password};
        rc = r->u.user[0] != '\0' ? command_ok(r, 3, a2, em)
                                  : command_ok(r, 2, a1, em);
    }
    if (rc == 0 && r->u.db >= 0) {
        char db[16];
        (void)snprintf(db, sizeof(db), "%d", r->u.db);
        const char *a[] = {"SELECT", db};
        rc = command_ok(r, 2, a, em);
    }
    if (rc < 0)
        disconnect(r);
    return rc;
}

/* The numbers of one entry, as text. */
struct xadd {
    char id[24], token[24], floor[24], at[24];
};

/* Append the field/value pairs of record x to argv[argc..] (at most 14):
 * id, type, name, owner_id, token, floor, at_ms; a session's record has
 * session_id, owner_id and, once ended, reason instead of the lease's
 * name, token and floor.  Returns the new argc. */
static int record_fields(const struct tn_pub_record *x, struct xadd *t,
                         const char **argv, int argc)
{
    bool session = tn_pub_is_session(x->type);
    (void)snprintf(t->id, sizeof(t->id), "%llu", (unsigned long long)x->id);
    (void)snprintf(t->token, sizeof(t->token), "%llu",
                   (unsigned long long)x->token);
    (void)snprintf(t->floor, sizeof(t->floor), "%llu",
                   (unsigned long long)x->floor);
    (void)snprintf(t->at, sizeof(t->at), "%lld", (long long)x->at_ms);
    argv[argc++] = "id";
    argv[argc++] = t->id;
    argv[argc++] = "type";
    argv[argc++] = tn_event_type_name(x->type);
    argv[argc++] = session ? "session_id" : "name";
    argv[argc++] = session ? x->session_id : x->name;
    argv[argc++] = "owner_id";
    argv[argc++] = x->owner_id;
    if (x->type == TN_EVENT_SESSION_ENDED) {
        argv[argc++] = "reason";
        argv[argc++] = tn_grant_end_name(x->end);
    } else if (!session) {
        argv[argc++] = "token";
        argv[argc++] = t->token;
        argv[argc++] = "floor";
        argv[argc++] = t->floor;
    }
    argv[argc++] = "at_ms";
    argv[argc++] = t->at;
    return argc;
}

static int redis_send(void *arg, const struct tn_pub_record *recs, size_t n,
                      size_t *acked, struct tn_errmsg *em)
{
    struct redis_target *r = arg;
    *acked = 0;
    if (r->c == NULL) {
        int rc = connect_to(r, em);
        if (rc < 0)
            return rc;
    }
    char maxlen[24];
    (void)snprintf(maxlen, sizeof(maxlen), "%llu",
                   (unsigned long long)r->maxlen);
    for (size_t i = 0; i < n; i++) {
        struct xadd x;
        const char *argv[24];
        int argc = 0;
        argv[argc++] = "XADD";
        argv[argc++] = r->u.stream;
        if (r->maxlen > 0) {
            argv[argc++] = "MAXLEN";
            argv[argc++] = "~";
            argv[argc++] = maxlen;
        }
        argv[argc++] = "*";
        argc = record_fields(&recs[i], &x, argv, argc);
        if (append(r, argc, argv) < 0) {
            tn_buf_reset(&r->out);
            tn_errmsg_set(em, "XADD: out of memory");
            return TN_ENOMEM;
        }
    }
    if (flush(r, em) < 0) {
        disconnect(r);
        return TN_EUNAVAIL;
    }
    int rc = TN_OK;
    for (size_t i = 0; i < n; i++) {
        redisReply *x = reply(r, em);
        if (x == NULL) {
            disconnect(r); /* replies still due cannot be matched */
            return TN_EUNAVAIL;
        }
        if (x->type != REDIS_REPLY_STRING && rc == 0) {
            tn_errmsg_set(em, "XADD: %.200s",
                          x->type == REDIS_REPLY_ERROR ? x->str : "odd reply");
            rc = TN_EUNAVAIL;
        }
        if (rc == 0)
            (*acked)++;
        freeReplyObject(x);
    }
    return rc;
}

static void redis_close(void *arg)
{
    struct redis_target *r = arg;
    if (r == NULL)
        return;
    disconnect(r);
    tn_buf_release(&r->out);
    tn_free(r);
}

const struct tn_pub_target_ops tn_pub_redis_ops = {
    .scheme = "redis",
    .open = redis_open,
    .send = redis_send,
    .close = redis_close,
};

const struct tn_pub_target_ops tn_pub_rediss_ops = {
    .scheme = "rediss",
    .open = redis_open,
    .send = redis_send,
    .close = redis_close,
};
