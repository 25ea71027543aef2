/* SPDX-License-Identifier: MIT */
/* tn-client-probe session URLS PREFIX TTL_MS HOLD_MS N: open a session of
 * TTL_MS, claim PREFIX0..N-1 under it, keep it alive, and poll
 * tn_lease_is_held of every lease every millisecond.  If HOLD_MS passes
 * while held, end the session and expect "released".  Then wait 2 TTLs
 * more, and print one line:
 *   end reason= rc= cb_at= calls= lease_calls= leases_before=
 *       last_held_at= held_after=
 * (the session's callback: its reason, rc, when it ran and how often; the
 * leases' callbacks, and how many had run when the session's did; the
 * last instant any lease read held before the end, and after it, -1 for
 * never).  Times are CLOCK_MONOTONIC ms. */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include <tenure/client.h>
#include <tenure/session.h>

#include "common/clock.h"
#include "probe.h"

struct seen {
    atomic_int calls;         /* session callbacks */
    atomic_int reason;        /* its reason */
    atomic_int rc;            /* its rc */
    atomic_llong at_ms;       /* when it first ran */
    atomic_int lease_calls;   /* lease callbacks */
    atomic_int leases_before; /* lease callbacks when the session's ran */
};

static void on_lease(struct tn_lease *l, enum tn_lease_end why, int rc,
                     void *ud)
{
    struct seen *s = ud;
    (void)why, (void)rc;
    if (tn_lease_is_held(l))
        (void)printf("error=held_in_callback name=%s\n", tn_lease_name(l));
    atomic_fetch_add(&s->lease_calls, 1);
}

static void on_session(struct tn_session *ss, enum tn_lease_end why, int rc,
                       void *ud)
{
    struct seen *s = ud;
    (void)ss;
    if (atomic_fetch_add(&s->calls, 1) == 0) {
        atomic_store(&s->at_ms, (long long)tn_clock_mono_ms());
        atomic_store(&s->leases_before, atomic_load(&s->lease_calls));
    }
    atomic_store(&s->reason, (int)why);
    atomic_store(&s->rc, rc);
}

struct held {
    struct tn_lease **l; /* n leases */
    size_t n;            /* claimed */
};

static bool any_held(const struct held *h)
{
    for (size_t i = 0; i < h->n; i++) {
        if (tn_lease_is_held(h->l[i]))
            return true;
    }
    return false;
}

/* Poll until the session's callback ran or until_ms; the last instant a
 * lease read held (-1: never). */
static int64_t watch(const struct held *h, struct seen *s, int64_t until_ms)
{
    int64_t last = -1;
    while (atomic_load(&s->calls) == 0 && tn_clock_mono_ms() < until_ms) {
        if (any_held(h))
            last = tn_clock_mono_ms();
        probe_nap_ms(1);
    }
    return last;
}

static int claim_all(struct tn_session *s, const char *prefix, struct held *h)
{
    char(*names)[128] = calloc(h->n, sizeof(*names));
    const char **ptrs = calloc(h->n, sizeof(*ptrs));
    for (size_t i = 0; names != NULL && ptrs != NULL && i < h->n; i++) {
        (void)snprintf(names[i], sizeof(names[i]), "%s%zu", prefix, i);
        ptrs[i] = names[i];
    }
    struct tn_claim_args a = {.names = ptrs, .n_names = h->n};
    struct tn_claim_result *res = NULL;
    struct tn_errmsg em = {{0}};
    int rc =
        ptrs != NULL ? tn_client_session_claim(s, &a, &res, &em) : TN_ENOMEM;
    for (size_t i = 0; rc == 0 && i < h->n; i++) {
        h->l[i] = res->items[i].lease;
        res->items[i].lease = NULL;
        if (h->l[i] == NULL)
            rc = TN_ECONFLICT;
        else
            (void)printf("claimed %s token=%" PRIu64 "\n", names[i],
                         tn_lease_token(h->l[i]));
    }
    if (rc < 0)
        (void)printf("error=claim rc=%s %s\n", tn_errname(rc), em.text);
    tn_claim_result_free(res);
    free(names);
    free(ptrs);
    return rc;
}

static void report(const struct held *h, struct seen *s, int64_t last,
                   int64_t ttl_ms)
{
    int64_t held_after = -1;
    int64_t until = tn_clock_mono_ms() + (ttl_ms < 1500 ? 2 * ttl_ms : 3000);
    while (tn_clock_mono_ms() < until) {
        if (any_held(h))
            held_after = tn_clock_mono_ms();
        probe_nap_ms(2);
    }
    (void)printf("end reason=%s rc=%s cb_at=%lld calls=%d lease_calls=%d "
                 "leases_before=%d last_held_at=%" PRId64 " held_after=%" PRId64
                 "\n",
                 tn_lease_end_name((enum tn_lease_end)atomic_load(&s->reason)),
                 tn_errname(atomic_load(&s->rc)), atomic_load(&s->at_ms),
                 atomic_load(&s->calls), atomic_load(&s->lease_calls),
                 atomic_load(&s->leases_before), last, held_after);
}

int probe_session(struct tn_client *c, const char *prefix, int64_t ttl_ms,
                  int64_t hold_ms, size_t n)
{
    struct seen seen = {0};
    struct held h = {calloc(n, sizeof(*h.l)), n};
    struct tn_session_args a = {.owner_id = "probe", .ttl_ms = ttl_ms};
    struct tn_session *s = NULL;
    struct tn_errmsg em = {{0}};
    int64_t t0 = tn_clock_mono_ms();
    int rc = h.l != NULL ? tn_client_session_open(c, &a, &s, &em) : TN_ENOMEM;
    if (rc == 0)
        (void)printf("session id=%s sent_before=%" PRId64 "\n",
                     tn_client_session_id(s), t0);
    if (rc == 0)
        rc = claim_all(s, prefix, &h);
    if (rc == 0)
        rc = tn_client_session_keepalive_start(s, on_session, on_lease, &seen);
    if (rc < 0) {
        (void)printf("error=session rc=%s %s\n", tn_errname(rc), em.text);
    } else {
        (void)fflush(stdout);
        int64_t last = watch(&h, &seen, t0 + hold_ms);
        if (atomic_load(&seen.calls) == 0) {
            rc = tn_client_session_end(s, &em);
            (void)printf("session_end rc=%s\n", tn_errname(rc));
            (void)watch(&h, &seen, tn_clock_mono_ms() + 2000);
        }
        report(&h, &seen, last, ttl_ms);
    }
    for (size_t i = 0; h.l != NULL && i < n; i++)
        tn_lease_free(h.l[i]);
    free(h.l);
    tn_client_session_free(s);
    return rc < 0 && rc != TN_ELOST ? 1 : 0;
}
