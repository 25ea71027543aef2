/* SPDX-License-Identifier: MIT */
/* tn-hammer load: acquires on random names from many keep-alive connections
 * until a deadline, a grant count, or the SIGKILL it sends to the server.
 * Each 201 is written as a grant line the moment it is read. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "hammer.h"

struct load_ctx {
    const struct hm_opts *o; /* options */
    struct hm_run *r;        /* the runner */
    FILE *out;               /* grant lines */
    uint64_t rng;            /* xorshift64 state, never 0 */
    long grants;             /* 201 responses */
    long held;               /* 409 responses */
    long errors;             /* transport errors */
    long other;              /* any other status */
    int stopping;            /* no new requests once set */
    long next_name;          /* --unique: the next name's number */
};

static uint64_t next_rand(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void start_one(struct load_ctx *c, struct hm_slot *s)
{
    const struct hm_opts *o = c->o;
    char name[HM_NAME_MAX];
    char owner[32];
    long span = o->ttl_max_ms - o->ttl_min_ms + 1;
    long idx = o->unique ? c->next_name++
                         : (long)(next_rand(&c->rng) % (uint64_t)o->names);
    long ttl = o->ttl_min_ms + (long)(next_rand(&c->rng) % (uint64_t)span);
    (void)snprintf(name, sizeof name, "%s%ld", o->prefix, idx);
    (void)snprintf(owner, sizeof owner, "h%ld", (long)(s - c->r->slots));
    if (hm_slot_acquire(c->r, s, name, owner, ttl) < 0)
        c->errors++;
}

static void on_done(void *ctx, struct hm_slot *s, long code)
{
    struct load_ctx *c = ctx;
    long long ack = (long long)tn_clock_now_ms();
    struct hm_grant g;
    if (code == 201 && hm_parse_grant(s, ack, &g) == 0) {
        hm_write_grant(c->out, &g);
        c->grants++;
    } else if (code == 409) {
        /* A 409 reveals a holder's token: it must be durable too. */
        hm_write_seen(c->out, s, ack);
        c->held++;
    } else if (code == 0) {
        c->errors++;
    } else {
        if (c->other++ < 5)
            (void)fprintf(stderr, "tn-hammer: HTTP %ld: %s\n", code, s->resp);
    }
    if (c->o->count > 0 &&
        (c->o->unique ? c->next_name : c->grants) >= c->o->count)
        c->stopping = 1;
    if (!c->stopping)
        start_one(c, s);
}

static void do_kill(struct load_ctx *c)
{
    long long before = (long long)tn_clock_now_ms();
    int rc = kill((pid_t)c->o->kill_pid, SIGKILL);
    long long after = (long long)tn_clock_now_ms();
    if (rc != 0)
        perror("tn-hammer: kill");
    (void)fprintf(c->out, "kill %lld %lld\n", before, after);
    (void)fflush(c->out);
}

static int check_load_opts(const struct hm_opts *o)
{
    if (o->url == NULL || o->out_path == NULL || o->names < 1 ||
        o->ttl_min_ms < 1 || o->ttl_max_ms < o->ttl_min_ms) {
        (void)fputs("tn-hammer load: need --url, --out, sane ranges\n", stderr);
        return -1;
    }
    return 0;
}

static void run_loop(struct load_ctx *c)
{
    const struct hm_opts *o = c->o;
    long long t0 = (long long)tn_clock_now_ms();
    long long deadline = t0 + o->duration_ms;
    long long drain_until = 0;
    for (long i = 0; i < c->r->nslots; i++)
        start_one(c, &c->r->slots[i]);
    for (;;) {
        if (hm_run_step(c->r, 5, on_done, c) < 0)
            break;
        long long now = (long long)tn_clock_now_ms();
        if (!c->stopping && o->kill_pid > 0 && now >= t0 + o->kill_after_ms) {
            do_kill(c);
            c->stopping = 1;
        } else if (!c->stopping && now >= deadline) {
            c->stopping = 1;
        }
        if (c->stopping && drain_until == 0)
            drain_until = (long long)tn_clock_now_ms() + o->drain_ms;
        if (c->stopping && (hm_run_busy(c->r) == 0 || now >= drain_until))
            break;
    }
}

int hm_load(const struct hm_opts *o)
{
    struct hm_run r;
    struct load_ctx c = {.o = o, .r = &r};
    int rc = 1;
    if (check_load_opts(o) < 0)
        return 2;
    c.rng = (uint64_t)o->seed * 2654435761u + 88172645463325252u;
    c.out = fopen(o->out_path, "ae");
    if (c.out == NULL) {
        perror("tn-hammer: open --out");
        return 2;
    }
    if (hm_run_init(&r, o->url, o->conns) < 0)
        goto out_release;
    run_loop(&c);
    (void)fprintf(stderr,
                  "tn-hammer load: grants=%ld held=%ld errors=%ld "
                  "other=%ld\n",
                  c.grants, c.held, c.errors, c.other);
    rc = c.other > 0 ? 1 : 0;
out_release:
    hm_run_release(&r);
    (void)fclose(c.out);
    return rc;
}
