/* SPDX-License-Identifier: MIT */
/* A request_id replay while others wait for the name (issue #36, item 2,
 * 2026-12-07): the replay answers the grant it asks for again, with or
 * without wait_ms, instead of 409 held naming its own owner (or a place in
 * the queue behind its own grant, answered when wait_ms ran out). */
#include <string.h>

#include "common/rand.h"
#include "contract.h"

/* An acquire of name by owner with request id rid, waiting up to wait_ms
 * (0: not at all); answered through c. */
static void start(struct call *c, const char *name, const char *owner,
                  const char *rid, int64_t wait_ms, uint8_t *secret)
{
    memset(c, 0, sizeof(*c));
    (void)tn_rand_bytes(secret, TN_SECRET_BYTES);
    struct tn_acquire_req r = {.name = name,
                               .name_len = strlen(name),
                               .owner_id = owner,
                               .request_id = rid,
                               .ttl_ms = 5000,
                               .secret = secret,
                               .wait_ms = wait_ms};
    E.s->ops->acquire(E.s, &r, &c->res, on_done, c);
}

/* The calls a case starts, so that none is left running on the loop
 * (writing into a returned frame) whatever check failed. */
struct calls {
    struct call h, g, x; /* holder, o's waiting grant, x in line */
    struct call again;   /* o's replay */
    bool g_started, x_started, again_started;
};

/* o's replay of its own waiting acquire, once the queue holds x. */
static void replay_steps(const char *n, struct calls *k)
{
    struct call c;
    uint8_t sg[TN_SECRET_BYTES], sx[TN_SECRET_BYTES], s2[TN_SECRET_BYTES];
    start(&k->g, n, "o", "R-1", 10000, sg);
    k->g_started = true;
    run_for(50);
    CHECK(!k->g.done); /* queued behind the holder */
    CHECK_RC(release(&k->h, &c), TN_OK);
    wait_calls(&k->g, 1);
    CHECK_RC(k->g.res.rc, TN_OK);
    uint64_t t = k->g.res.lease.token;
    start(&k->x, n, "x", NULL, 10000, sx);
    k->x_started = true;
    run_for(50);
    CHECK(!k->x.done); /* x waits behind o's grant */
    /* The very same request again, with its wait_ms, then without. */
    for (int64_t wait = 10000; wait >= 0; wait -= 10000) {
        start(&k->again, n, "o", "R-1", wait, s2);
        k->again_started = true;
        run_for(50);
        CHECK(k->again.done); /* not queued behind its own grant */
        CHECK_RC(k->again.res.rc, TN_OK);
        CHECK(k->again.res.replayed);
        CHECK(k->again.res.lease.token == t);
        CHECK(memcmp(k->again.res.lease.secret, sg, TN_SECRET_BYTES) == 0);
        CHECK(strcmp(k->again.res.lease.owner_id, "o") == 0);
    }
    CHECK(!k->x.done); /* still in line */
    CHECK_RC(release(&k->g, &c), TN_OK);
    wait_calls(&k->x, 1);
    CHECK_RC(k->x.res.rc, TN_OK);
    CHECK(k->x.res.lease.token > t);
}

void case_replay_with_waiters(void)
{
    static struct calls k;
    struct call c;
    if (!has_cap(E.b->caps.waits, "replay_with_waiters", "waits"))
        return;
    memset(&k, 0, sizeof(k));
    const char *n = nm("rq-waiters");
    CHECK_RC(acquire(&k.h, n, "holder", 1000, NULL, 0), TN_OK);
    replay_steps(n, &k);
    /* Whatever failed above, nothing is left waiting on the loop. */
    if (k.g_started)
        wait_calls(&k.g, 1);
    if (k.again_started)
        wait_calls(&k.again, 1);
    if (k.x_started && !k.x.done && k.g.res.rc == TN_OK)
        (void)release(&k.g, &c);
    if (k.x_started)
        wait_calls(&k.x, 1);
    if (k.x_started && k.x.res.rc == TN_OK)
        (void)release(&k.x, &c);
}
