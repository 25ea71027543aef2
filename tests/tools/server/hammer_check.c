/* SPDX-License-Identifier: MIT */
/* tn-hammer probe: the judgement of the crash test after a restart.
 * A name whose acknowledged grant was surely live at the kill (sent + ttl >
 * kill) must stay held by that same grant until its own ttl has run out
 * (sent + ttl), and, when it was surely still live once the restarted server
 * was ready (sent + ttl > ready), until ttl has passed since the restart
 * (CONTRACT §4.5: the server may drop a lease whose CLOCK_BOOTTIME expiry
 * passed before the restart, within one boot, and nothing else).  Without
 * --ready-ms every lease live at the kill gets the full-ttl rule.  Every
 * grant must carry a token above every token acknowledged before. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "hammer.h"

struct target {
    const struct hm_grant *g; /* the latest acknowledged grant of the name */
    long long held_until_ms;  /* no other owner may get it before this */
    int granted;              /* 1 once the probe itself got the name */
};

struct probe_ctx {
    const struct hm_opts *o; /* options */
    struct hm_run *r;        /* the runner */
    FILE *out;               /* the probe's own grants */
    struct target *t;        /* live names */
    size_t nt;               /* number of live names */
    size_t next;             /* next target index to send in this pass */
    long long floor;         /* highest token acknowledged before */
    long held;               /* 409 held by the right grant */
    size_t live_at_ready;    /* targets under the full-ttl rule */
    long granted;            /* 201 after the ttl had passed */
    long violations;         /* broken promises */
};

static int by_name_token(const void *a, const void *b)
{
    const struct hm_grant *x = a;
    const struct hm_grant *y = b;
    int c = strcmp(x->name, y->name);
    if (c != 0)
        return c;
    return (x->token > y->token) - (x->token < y->token);
}

static void violation(struct probe_ctx *c, const char *what,
                      const struct hm_grant *g, long code, const char *body)
{
    c->violations++;
    (void)printf("VIOLATION %s name=%s acked_token=%lld ttl_ms=%ld "
                 "floor=%lld restart_ms=%ld now_ms=%lld code=%ld body=%s\n",
                 what, g->name, g->token, g->ttl_ms, c->floor, c->o->restart_ms,
                 (long long)tn_clock_now_ms(), code, body);
}

static void judge_held(struct probe_ctx *c, const struct hm_slot *s,
                       const struct target *t, long long ack)
{
    const struct hm_grant *g = t->g;
    json_error_t err;
    json_t *root = json_loadb(s->resp, s->resp_len, 0, &err);
    json_t *h = json_object_get(root, "holder");
    const char *code = json_string_value(json_object_get(root, "error"));
    json_t *tok = json_object_get(h, "token");
    json_t *exp = json_object_get(h, "expires_in_ms");
    const char *owner = json_string_value(json_object_get(h, "owner_id"));
    if (code == NULL || strcmp(code, "held") != 0 || !json_is_integer(tok) ||
        !json_is_integer(exp) || owner == NULL) {
        violation(c, "bad_409_body", g, 409, s->resp);
    } else if (json_integer_value(tok) != g->token ||
               strcmp(owner, g->owner) != 0) {
        violation(c, "wrong_holder", g, 409, s->resp);
    } else if (ack + json_integer_value(exp) < t->held_until_ms - 2) {
        /* The server would free it too early (2 ms of rounding). */
        violation(c, "short_hold", g, 409, s->resp);
    } else {
        c->held++;
    }
    json_decref(root);
}

static void judge_grant(struct probe_ctx *c, const struct hm_slot *s,
                        struct target *t, long long ack)
{
    struct hm_grant mine;
    if (hm_parse_grant(s, ack, &mine) < 0) {
        violation(c, "bad_201_body", t->g, 201, s->resp);
        return;
    }
    hm_write_grant(c->out, &mine);
    t->granted = 1;
    c->granted++;
    if (mine.token <= c->floor)
        violation(c, "token_not_above_acked", t->g, 201, s->resp);
    if (ack < t->g->send_ms + t->g->ttl_ms)
        violation(c, "granted_before_its_own_ttl", t->g, 201, s->resp);
    else if (ack < t->held_until_ms)
        violation(c, "granted_before_ttl_since_restart", t->g, 201, s->resp);
}

static void send_next(struct probe_ctx *c, struct hm_slot *s)
{
    while (c->next < c->nt && c->t[c->next].granted)
        c->next++;
    if (c->next >= c->nt)
        return;
    s->target = (long)c->next;
    if (hm_slot_acquire(c->r, s, c->t[c->next].g->name, c->o->owner,
                        c->o->probe_ttl_ms) < 0)
        c->violations++;
    c->next++;
}

static void on_probe_done(void *ctx, struct hm_slot *s, long code)
{
    struct probe_ctx *c = ctx;
    long long ack = (long long)tn_clock_now_ms();
    struct target *t = &c->t[s->target];
    if (code == 409)
        judge_held(c, s, t, ack);
    else if (code == 201)
        judge_grant(c, s, t, ack);
    else
        violation(c, "unexpected_status", t->g, code, s->resp);
    send_next(c, s);
}

static void run_pass(struct probe_ctx *c)
{
    c->next = 0;
    for (long i = 0; i < c->r->nslots; i++)
        send_next(c, &c->r->slots[i]);
    while (hm_run_busy(c->r) > 0)
        if (hm_run_step(c->r, 50, on_probe_done, c) < 0)
            break;
}

/* Latest grant per name that was surely live at the kill, with the
 * instant before which no one else may get it. */
static void live_targets(struct probe_ctx *c, struct hm_grant *g, size_t n,
                         long long kill_after)
{
    const struct hm_opts *o = c->o;
    qsort(g, n, sizeof *g, by_name_token);
    for (size_t i = 0; i < n; i++) {
        int last = i + 1 == n || strcmp(g[i].name, g[i + 1].name) != 0;
        long long own_end = g[i].send_ms + g[i].ttl_ms;
        if (!last || own_end <= kill_after)
            continue;
        struct target *t = &c->t[c->nt++];
        *t = (struct target){.g = &g[i], .held_until_ms = own_end};
        if (o->ready_ms == 0 || own_end > o->ready_ms) {
            t->held_until_ms = o->restart_ms + g[i].ttl_ms;
            c->live_at_ready++;
        }
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (ms % 1000) * 1000000};
    (void)nanosleep(&ts, NULL);
}

static int probe_all(struct probe_ctx *c)
{
    struct hm_run r;
    int rc = hm_run_init(&r, c->o->url, c->o->conns);
    c->r = &r;
    for (long p = 0; rc == 0 && p < c->o->passes; p++) {
        if (p > 0)
            sleep_ms(c->o->gap_ms);
        run_pass(c);
    }
    hm_run_release(&r);
    c->r = NULL;
    return rc;
}

int hm_probe(const struct hm_opts *o)
{
    struct hm_grant *g = NULL;
    size_t n = 0;
    long long kill_after = -1;
    struct probe_ctx c = {.o = o, .floor = o->floor_token};
    int rc = 2;
    if (o->url == NULL || o->grants_path == NULL || o->out_path == NULL ||
        o->restart_ms <= 0 ||
        hm_read_grants(o->grants_path, &g, &n, &kill_after, NULL) < 0 ||
        kill_after < 0) {
        (void)fputs("tn-hammer probe: need --url --grants (with a kill "
                    "line) --out --restart-ms\n",
                    stderr);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        c.floor = g[i].token > c.floor ? g[i].token : c.floor;
    c.t = tn_calloc(n + 1, sizeof *c.t);
    c.out = fopen(o->out_path, "ae");
    if (c.t == NULL || c.out == NULL)
        goto out;
    live_targets(&c, g, n, kill_after);
    rc = probe_all(&c) < 0 ? 2 : (c.violations > 0 ? 1 : 0);
    (void)fprintf(stderr,
                  "tn-hammer probe: acked=%zu live_at_kill=%zu "
                  "live_at_ready=%zu held=%ld granted_after_ttl=%ld "
                  "violations=%ld\n",
                  n, c.nt, c.live_at_ready, c.held, c.granted, c.violations);
out:
    if (c.out != NULL)
        (void)fclose(c.out);
    tn_free(c.t);
    tn_free(g);
    return rc;
}
