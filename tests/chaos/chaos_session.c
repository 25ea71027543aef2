/* SPDX-License-Identifier: MIT */
/* The session workers of the harness (tn-chaos client --sessions N,
 * docs/safety/sessions.md).  Each thread is a worker that holds many leases
 * under one session at a time, as a fair-share worker does: it opens a
 * session, claims batches of names (up to N, at random from the pool),
 * writes every lease it believes it holds to the fenced sink in one
 * transaction a round, renews the session between rounds (its
 * keepalive), sometimes claims more or gives a few back in a batch
 * release, then ends the session or (one time in five) abandons it to
 * expire, and asks about a few of its former leases (check).  Like the
 * lease workers it never looks at the clock before writing: frozen past
 * its TTL, it wakes up and writes its round with its old tokens, and the
 * fence must refuse them.
 *
 * History: session operations are the worker's own proc; each name of a
 * batch claim or batch release is one acquire or release of its own proc
 * "<worker>/<name>" (every name is decided on its own), invoked when the
 * batch is sent and completed when its answer came: granted ok with its
 * token, held or lock_delay fail, and the whole batch fail or info when
 * the request was refused or its outcome is unknown. */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chaos.h"
#include "common/clock.h"

#define NAME_CAP 128
#define PROC_CAP (64 + NAME_CAP + 1)
#define REQ_CAP ((size_t)64 * 1024)

struct held {
    char name[NAME_CAP]; /* the lease's name */
    uint64_t token;      /* its grant */
};

struct sess {
    struct chaos_worker *w;
    char id[64];     /* session_id */
    char secret[64]; /* session_secret */
    int64_t ttl_ms;  /* of the open and every renew */
    struct held *h;  /* the leases the worker believes it holds */
    size_t n;        /* used entries of h */
    char *req;       /* a request body, REQ_CAP bytes */
    char item[PROC_CAP];
};

/* The proc of one name of a batch: "<worker>/<name>". */
static const char *item_proc(struct sess *s, const char *name)
{
    (void)snprintf(s->item, sizeof(s->item), "%s/%s", s->w->proc, name);
    return s->item;
}

static bool holds(const struct sess *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->h[i].name, name) == 0)
            return true;
    }
    return false;
}

static void forget(struct sess *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->h[i].name, name) == 0) {
            s->h[i] = s->h[--s->n];
            return;
        }
    }
}

static bool open_session(struct sess *s)
{
    struct chaos_worker *w = s->w;
    char json[256];
    char tail[64];
    (void)snprintf(json, sizeof(json),
                   "{\"owner_id\":\"%s\",\"ttl_ms\":%" PRId64 "}", w->proc,
                   s->ttl_ms);
    chaos_rec(w, NULL, "", "session_open", "invoke", NULL, NULL, 0, s->ttl_ms,
              tn_clock_mono_ns());
    long st = chaos_http(w, "POST", "/v1/sessions", json);
    w->ops++;
    if (st == 201 &&
        (chaos_body_str(w, "session_id", s->id, sizeof(s->id)) < 0 ||
         chaos_body_str(w, "session_secret", s->secret, sizeof(s->secret)) < 0))
        st = 0; /* an answer we cannot read: outcome unknown */
    chaos_rec(w, NULL, st == 201 ? "" : chaos_fail_tail(w, st, tail, 64),
              "session_open", chaos_phase_of(st, 201), NULL,
              st == 201 ? s->id : NULL, 0, 0, tn_clock_mono_ns());
    return st == 201;
}

/* The answer's item of name in the array key ({"name", "token"?}), or
 * NULL. */
static json_t *item_of(json_t *root, const char *key, const char *name)
{
    json_t *arr = json_object_get(root, key);
    size_t i;
    json_t *it;
    json_array_foreach(arr, i, it)
    {
        json_t *n = json_object_get(it, "name");
        if (json_is_string(n) && strcmp(json_string_value(n), name) == 0)
            return it;
    }
    return NULL;
}

/* Record the completion of each name of a batch claim. */
static void claim_done(struct sess *s, char (*names)[NAME_CAP], size_t k,
                       long st)
{
    struct chaos_worker *w = s->w;
    char tail[64];
    int64_t t = tn_clock_mono_ns();
    json_t *root = st == 200 ? json_loads(w->body, 0, NULL) : NULL;
    if (st != 200)
        (void)chaos_fail_tail(w, st, tail, sizeof(tail));
    for (size_t i = 0; i < k; i++) {
        const char *phase = chaos_phase_of(st, 200);
        uint64_t token = 0;
        json_t *g = item_of(root, "granted", names[i]);
        json_t *tok = json_object_get(g, "token");
        if (st == 200 && json_is_integer(tok) && json_integer_value(tok) > 0) {
            token = (uint64_t)json_integer_value(tok);
            tail[0] = '\0';
            if (!holds(s, names[i]) && s->n < s->w->o->names) {
                (void)snprintf(s->h[s->n].name, NAME_CAP, "%s", names[i]);
                s->h[s->n++].token = token;
            }
        } else if (st == 200 && item_of(root, "held", names[i]) != NULL) {
            phase = "fail";
            (void)snprintf(tail, sizeof(tail), ",\"error\":\"held\"");
        } else if (st == 200 && item_of(root, "lock_delay", names[i])) {
            phase = "fail";
            (void)snprintf(tail, sizeof(tail), ",\"error\":\"lock_delay\"");
        } else if (st == 200) {
            phase = "info"; /* an answer we cannot read */
            tail[0] = '\0';
        }
        chaos_rec(w, item_proc(s, names[i]), tail, "acquire", phase, NULL, NULL,
                  token, 0, t);
    }
    json_decref(root);
}

/* Claim up to o->sessions names of the pool at random, in one batch.
 * Returns the status (409 lost: the session is gone). */
static long claim(struct sess *s)
{
    struct chaos_worker *w = s->w;
    const struct chaos_opts *o = w->o;
    size_t want = (size_t)chaos_between(&w->rng, 1, o->sessions);
    char(*names)[NAME_CAP] = calloc(want, NAME_CAP);
    if (names == NULL)
        return -1;
    size_t k = 0;
    for (size_t tries = 0; k < want && tries < 4 * want; tries++) {
        char name[NAME_CAP];
        (void)snprintf(name, sizeof(name), "%s%u", o->name_prefix,
                       (unsigned)(chaos_rand(&w->rng) % o->names));
        bool dup = holds(s, name);
        for (size_t i = 0; i < k && !dup; i++)
            dup = strcmp(names[i], name) == 0;
        if (!dup)
            (void)snprintf(names[k++], NAME_CAP, "%s", name);
    }
    long st = 0;
    if (k == 0)
        goto out;
    size_t n = (size_t)snprintf(
        s->req, REQ_CAP, "{\"session_secret\":\"%s\",\"names\":[", s->secret);
    for (size_t i = 0; i < k; i++)
        n += (size_t)snprintf(s->req + n, REQ_CAP - n, "%s\"%s\"",
                              i > 0 ? "," : "", names[i]);
    (void)snprintf(s->req + n, REQ_CAP - n, "]}");
    int64_t t0 = tn_clock_mono_ns();
    for (size_t i = 0; i < k; i++)
        chaos_rec(w, item_proc(s, names[i]), "", "acquire", "invoke", names[i],
                  s->id, 0, 0, t0);
    char path[160];
    (void)snprintf(path, sizeof(path), "/v1/sessions/%s/leases", s->id);
    st = chaos_http(w, "POST", path, s->req);
    w->ops++;
    claim_done(s, names, k, st);
    if (st == 409)
        st = strstr(w->body, "\"lost\"") != NULL ? 409 : 400;
out:
    free(names);
    return st;
}

/* Give 1-2 of the held leases back in one batch release.  They are
 * forgotten whatever the answer: a release that may have been applied
 * ends the worker's writes to them. */
static void release_some(struct sess *s)
{
    struct chaos_worker *w = s->w;
    size_t k = (size_t)chaos_between(&w->rng, 1, s->n > 1 ? 2 : 1);
    struct held rel[2];
    for (size_t i = 0; i < k; i++)
        rel[i] = s->h[chaos_rand(&w->rng) % s->n];
    if (k == 2 && strcmp(rel[0].name, rel[1].name) == 0)
        k = 1;
    size_t n = (size_t)snprintf(
        s->req, REQ_CAP, "{\"session_secret\":\"%s\",\"leases\":[", s->secret);
    int64_t t0 = tn_clock_mono_ns();
    for (size_t i = 0; i < k; i++) {
        n += (size_t)snprintf(s->req + n, REQ_CAP - n,
                              "%s{\"name\":\"%s\",\"token\":%" PRIu64 "}",
                              i > 0 ? "," : "", rel[i].name, rel[i].token);
        chaos_rec(w, item_proc(s, rel[i].name), "", "release", "invoke",
                  rel[i].name, NULL, rel[i].token, 0, t0);
        forget(s, rel[i].name);
    }
    (void)snprintf(s->req + n, REQ_CAP - n, "]}");
    char path[160];
    (void)snprintf(path, sizeof(path), "/v1/sessions/%s/leases", s->id);
    long st = chaos_http(w, "DELETE", path, s->req);
    w->ops++;
    json_t *root = st == 200 ? json_loads(w->body, 0, NULL) : NULL;
    char tail[64];
    (void)chaos_fail_tail(w, st, tail, sizeof(tail));
    int64_t t1 = tn_clock_mono_ns();
    for (size_t i = 0; i < k; i++) {
        const char *phase = chaos_phase_of(st, 200);
        const char *tl = tail;
        if (st == 200 && item_of(root, "released", rel[i].name) != NULL) {
            tl = "";
        } else if (st == 200 && item_of(root, "lost", rel[i].name) != NULL) {
            phase = "fail";
            tl = ",\"error\":\"lost\"";
        } else if (st == 200) {
            phase = "info";
            tl = "";
        }
        chaos_rec(w, item_proc(s, rel[i].name), tl, "release", phase, NULL,
                  NULL, 0, 0, t1);
    }
    json_decref(root);
}

/* PATCH (renew) or DELETE (end) of the session; returns the status. */
static long session_op(struct sess *s, const char *method, const char *op)
{
    struct chaos_worker *w = s->w;
    char path[160];
    char json[160];
    char tail[64];
    bool renew = strcmp(op, "session_renew") == 0;
    (void)snprintf(path, sizeof(path), "/v1/sessions/%s", s->id);
    if (renew)
        (void)snprintf(json, sizeof(json),
                       "{\"session_secret\":\"%s\",\"ttl_ms\":%" PRId64 "}",
                       s->secret, s->ttl_ms);
    else
        (void)snprintf(json, sizeof(json), "{\"session_secret\":\"%s\"}",
                       s->secret);
    chaos_rec(w, NULL, "", op, "invoke", NULL, s->id, 0, renew ? s->ttl_ms : 0,
              tn_clock_mono_ns());
    long st = chaos_http(w, method, path, json);
    w->ops++;
    long ok = renew ? 200 : 204;
    chaos_rec(w, NULL, st == ok ? "" : chaos_fail_tail(w, st, tail, 64), op,
              chaos_phase_of(st, ok), NULL, NULL, 0, 0, tn_clock_mono_ns());
    return st;
}

/* One fenced write of every lease held, in one sink transaction. */
static void write_round(struct sess *s)
{
    struct chaos_worker *w = s->w;
    if (s->n == 0)
        return;
    if (w->sink == NULL) {
        for (size_t i = 0; i < s->n; i++)
            chaos_write(w, s->h[i].name, s->h[i].token);
        return;
    }
    const char **names = calloc(s->n, sizeof(*names));
    uint64_t *tokens = calloc(s->n, sizeof(*tokens));
    bool *admitted = calloc(s->n, sizeof(*admitted));
    if (names != NULL && tokens != NULL && admitted != NULL) {
        for (size_t i = 0; i < s->n; i++) {
            names[i] = s->h[i].name;
            tokens[i] = s->h[i].token;
        }
        w->writes += s->n;
        if (chaos_sink_write_many(w->sink, names, tokens, s->n, w->proc,
                                  admitted) == 0) {
            for (size_t i = 0; i < s->n; i++) {
                w->admitted += admitted[i];
                w->rejected += !admitted[i];
            }
        }
    }
    free(names);
    free(tokens);
    free(admitted);
}

/* Ask whether up to two of the former leases are still current (they
 * must not be: the session ended). */
static void probe(struct sess *s)
{
    struct chaos_worker *w = s->w;
    for (size_t k = 0; k < 2 && s->n > 0; k++) {
        struct held l = s->h[chaos_rand(&w->rng) % s->n];
        forget(s, l.name);
        char path[300];
        char tail[64] = "";
        (void)snprintf(path, sizeof(path), "/v1/leases/%s/check?token=%" PRIu64,
                       l.name, l.token);
        const char *proc = item_proc(s, l.name);
        chaos_rec(w, proc, "", "check", "invoke", l.name, NULL, l.token, 0,
                  tn_clock_mono_ns());
        long st = chaos_http(w, "GET", path, NULL);
        w->ops++;
        const char *ph = chaos_phase_of(st, 200);
        if (st == 200) {
            json_t *root = json_loads(w->body, 0, NULL);
            json_t *v = root != NULL ? json_object_get(root, "current") : NULL;
            if (json_is_boolean(v))
                (void)snprintf(tail, sizeof(tail), ",\"current\":%s",
                               json_is_true(v) ? "true" : "false");
            else
                ph = "info";
            json_decref(root);
        } else {
            (void)chaos_fail_tail(w, st, tail, sizeof(tail));
        }
        chaos_rec(w, item_proc(s, l.name), tail, "check", ph, NULL, NULL, 0, 0,
                  tn_clock_mono_ns());
    }
}

/* Rounds of writes and keepalive; returns true while the session lives. */
static bool rounds(struct sess *s, int64_t end_ns)
{
    struct chaos_worker *w = s->w;
    int n = (int)chaos_between(&w->rng, 1, w->o->max_rounds);
    for (int r = 0; r < n; r++) {
        write_round(s);
        chaos_sleep_ms(chaos_between(&w->rng, s->ttl_ms / 5, s->ttl_ms / 3));
        write_round(s);
        if (chaos_run_over(w, end_ns))
            return true;
        long st = session_op(s, "PATCH", "session_renew");
        if (st == 409 || st == 403 || st == 404)
            return false; /* lost: every lease of it with it */
        if (st != 200)
            continue; /* unknown: the next round's renew tries again */
        if (chaos_rand(&w->rng) % 3 == 0 && claim(s) == 409)
            return false;
        if (s->n > 0 && chaos_rand(&w->rng) % 4 == 0)
            release_some(s);
    }
    return true;
}

void chaos_session_life(struct chaos_worker *w, int64_t end_ns)
{
    struct sess s = {.w = w};
    s.ttl_ms = chaos_between(&w->rng, w->o->ttl_min_ms, w->o->ttl_max_ms);
    s.h = calloc(w->o->names, sizeof(*s.h));
    s.req = malloc(REQ_CAP);
    if (s.h == NULL || s.req == NULL || !open_session(&s)) {
        chaos_sleep_ms(chaos_between(&w->rng, 10, 60));
        goto out;
    }
    bool live = claim(&s) != 409 && rounds(&s, end_ns);
    if (live)
        write_round(&s);
    if (live && chaos_rand(&w->rng) % 5 == 0)
        goto out; /* abandon it: let it expire */
    long st = live ? session_op(&s, "DELETE", "session_end") : 409;
    if (st == 204 || st == 409)
        probe(&s);
out:
    free(s.h);
    free(s.req);
}
