/* SPDX-License-Identifier: MIT */
/* Sessions in the lease state machine (src/lease/session.c, lease.c):
 * table-driven cases (state, now_ms, request) -> (rc, state').  The seeded
 * random walk is in test_session_walk.c.  The clock is the test's: now_ms
 * is passed in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "lease/lease.h"
#include "lease/session.h"
#include "lease_fixture.h"
#include "tn_test.h"

#include <cmocka.h>

#define SID_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static struct tn_session *open_session(struct tn_lease_table *t, const char *id,
                                       const char *owner, int64_t ttl,
                                       int64_t now)
{
    struct tn_session_spec r = {
        .id = id, .owner_id = owner, .ttl_ms = ttl, .secret = secret_a};
    struct tn_session *s = NULL;
    assert_int_equal(tn_session_open(t, &r, now, &s), TN_OK);
    return s;
}

/* An acquire of name under session id, presenting sec. */
static int acquire_in(struct tn_lease_table *t, const char *name,
                      const char *owner, const char *id, const uint8_t *sec,
                      int64_t now, struct tn_lease_entry **out, bool *replayed)
{
    struct tn_acquire_req r = acq(name, owner, 0, secret_b);
    r.session_id = id;
    r.session_secret = sec;
    int64_t retry = 0;
    return tn_lease_acquire(t, &r, now, out, replayed, &retry);
}

static struct tn_lease_entry *grant_in(struct tn_lease_table *t,
                                       const char *name, const char *id,
                                       int64_t now)
{
    struct tn_lease_entry *l = NULL;
    bool replayed = true;
    assert_int_equal(acquire_in(t, name, "w", id, secret_a, now, &l, &replayed),
                     TN_OK);
    assert_false(replayed);
    return l;
}

/* Walk s's list: every lease on it points back at s, the count is
 * n_leases, and the links agree both ways. */
static size_t list_length(const struct tn_session *s)
{
    size_t n = 0;
    const struct tn_lease_entry *prev = NULL;
    for (const struct tn_lease_entry *l = s->leases; l != NULL;
         l = l->sess_next) {
        assert_ptr_equal(l->session, s);
        assert_ptr_equal(l->sess_prev, prev);
        prev = l;
        n++;
    }
    assert_int_equal(n, s->n_leases);
    return n;
}

static void test_session__leases_live_exactly_as_long_as_it(void **state)
{
    struct fixture *f = *state;
    struct tn_session *s = open_session(&f->t, SID_A, "fleet", 100, 0);
    assert_int_equal(s->expires_at_ms, 101); /* rounded up, as a lease */
    struct tn_lease_entry *a = grant_in(&f->t, "a", SID_A, 10);
    struct tn_lease_entry *b = grant_in(&f->t, "b", SID_A, 20);
    assert_true(b->token > a->token);
    assert_int_equal(a->expires_at_ms, TN_LEASE_NO_EXPIRY);
    assert_int_equal(tn_lease_expires_at(a), 101);
    assert_int_equal(list_length(s), 2);
    /* One renew keeps both; no token changes. */
    uint64_t ta = a->token, tb = b->token;
    assert_int_equal(tn_session_renew(&f->t, s, secret_a, NULL, 0, 90), TN_OK);
    assert_true(tn_lease_is_live(a, 150) && tn_lease_is_live(b, 150));
    assert_int_equal(a->token, ta);
    assert_int_equal(b->token, tb);
    assert_int_equal(tn_lease_expires_at(b), 191);
    /* Both end at the session's expiry, at one instant. */
    assert_true(tn_lease_is_live(a, 190) && tn_lease_is_live(b, 190));
    assert_false(tn_lease_is_live(a, 191) || tn_lease_is_live(b, 191));
    assert_int_equal(tn_session_renew(&f->t, s, secret_a, NULL, 0, 191),
                     TN_ELOST); /* never revived */
}

static void test_session__acquire_needs_a_live_session(void **state)
{
    struct fixture *f = *state;
    struct tn_lease_entry *l = NULL;
    bool rp = false;
    assert_int_equal(acquire_in(&f->t, "a", "w", SID_A, secret_a, 0, &l, &rp),
                     TN_ELOST); /* never opened */
    struct tn_session *s = open_session(&f->t, SID_A, "fleet", 100, 0);
    assert_int_equal(acquire_in(&f->t, "a", "w", SID_A, secret_b, 1, &l, &rp),
                     TN_EFORBIDDEN);
    assert_null(tn_lease_find(&f->t, "a", 1)); /* nothing changed */
    assert_int_equal(acquire_in(&f->t, "a", "w", "short", secret_a, 1, &l, &rp),
                     TN_ELOST);
    assert_int_equal(acquire_in(&f->t, "a", "w", SID_A, secret_a, 101, &l, &rp),
                     TN_ELOST); /* ran out */
    assert_int_equal(s->n_leases, 0);
}

static void test_session__principal_binds_it(void **state)
{
    struct fixture *f = *state;
    struct tn_session_spec r = {.id = SID_A,
                                .owner_id = "fleet",
                                .principal = "alice",
                                .ttl_ms = 100,
                                .secret = secret_a};
    struct tn_session *s = NULL;
    assert_int_equal(tn_session_open(&f->t, &r, 0, &s), TN_OK);
    assert_int_equal(tn_session_auth(s, secret_a, "bob", 1), TN_EFORBIDDEN);
    assert_int_equal(tn_session_auth(s, secret_a, "alice", 1), TN_OK);
    assert_int_equal(tn_session_auth(s, secret_a, NULL, 1), TN_OK); /* admin */
    assert_int_equal(tn_session_renew(&f->t, s, secret_a, "bob", 0, 2),
                     TN_EFORBIDDEN);
    assert_int_equal(tn_session_open(&f->t, &r, 0, &s), TN_ECONFLICT);
}

static void test_session__claim_again_is_the_same_grant(void **state)
{
    struct fixture *f = *state;
    open_session(&f->t, SID_A, "fleet", 100, 0);
    open_session(&f->t, SID_B, "other", 100, 0);
    struct tn_lease_entry *a = grant_in(&f->t, "a", SID_A, 1);
    uint64_t t = a->token;
    struct tn_lease_entry *l = NULL;
    bool rp = false;
    assert_int_equal(acquire_in(&f->t, "a", "w", SID_A, secret_a, 2, &l, &rp),
                     TN_OK);
    assert_true(rp);
    assert_int_equal(l->token, t);
    assert_int_equal(f->t.last_token, t); /* no token drawn */
    assert_int_equal(acquire_in(&f->t, "a", "v", SID_A, secret_a, 2, &l, &rp),
                     TN_ECONFLICT); /* another owner of the same session */
    assert_int_equal(acquire_in(&f->t, "a", "w", SID_B, secret_a, 2, &l, &rp),
                     TN_ECONFLICT); /* another session */
    struct tn_acquire_req r = acq("a", "w", 100, secret_b);
    assert_int_equal(tn_lease_acquire(&f->t, &r, 2, &l, &rp, &(int64_t){0}),
                     TN_ECONFLICT); /* no session */
}

static void test_session__lease_renewed_only_by_its_session(void **state)
{
    struct fixture *f = *state;
    struct tn_session *s = open_session(&f->t, SID_A, "fleet", 100, 0);
    struct tn_lease_entry *a = grant_in(&f->t, "a", SID_A, 1);
    struct tn_lease_entry *b = grant_in(&f->t, "b", SID_A, 1);
    struct tn_lease_entry *l = NULL;
    struct tn_token_req r = tok("a", a->token, secret_b);
    assert_int_equal(tn_lease_renew(&f->t, &r, 2, &l), TN_EINVAL);
    r.secret[0] ^= 1;
    assert_int_equal(tn_lease_renew(&f->t, &r, 2, &l), TN_EFORBIDDEN);
    r.secret[0] ^= 1;
    /* Released alone: it leaves the session, which goes on. */
    assert_int_equal(tn_lease_release(&f->t, &r, 3, &l), TN_OK);
    assert_false(a->held);
    assert_null(a->session);
    assert_int_equal(list_length(s), 1);
    assert_true(tn_session_is_live(s, 4) && tn_lease_is_live(b, 4));
    assert_int_equal(tn_lease_release(&f->t, &r, 4, &l), TN_ELOST);
    /* Force (an admin) releases one too. */
    struct tn_token_req fr = tok("b", 0, secret_a);
    fr.force = true;
    assert_int_equal(tn_lease_release(&f->t, &fr, 5, &l), TN_OK);
    assert_int_equal(list_length(s), 0);
}

/* End s with end at `at`, settle all of its leases, and check each. */
static void end_and_settle(struct tn_lease_table *t, struct tn_session *s,
                           enum tn_session_end end, int64_t at)
{
    uint64_t seq = t->seq;
    tn_session_end(t, s, end, at);
    assert_true(s->seq > seq);
    assert_false(tn_session_is_live(s, at));
    for (const struct tn_lease_entry *l = s->leases; l != NULL;
         l = l->sess_next)
        assert_false(tn_lease_is_live(l, at)); /* all at that instant */
    while (s->leases != NULL) {
        struct tn_lease_entry *l = s->leases;
        assert_int_equal(tn_lease_settle(t, l, at), end);
        assert_null(l->session);
        assert_int_equal(l->expires_at_ms, at);
        assert_int_equal(l->held, end == TN_SESSION_EXPIRED);
    }
    assert_int_equal(s->n_leases, 0);
    tn_session_free(t, s);
}

static void test_session__delete_releases_every_lease(void **state)
{
    struct fixture *f = *state;
    struct tn_session *s = open_session(&f->t, SID_A, "fleet", 100, 0);
    uint64_t top = 0;
    char name[16];
    for (int i = 0; i < 5; i++) {
        (void)snprintf(name, sizeof(name), "n%d", i);
        struct tn_acquire_req r = acq(name, "w", 0, secret_b);
        r.session_id = SID_A;
        r.session_secret = secret_a;
        r.lock_delay_ms = 1000;
        struct tn_lease_entry *l;
        bool rp;
        int64_t retry;
        assert_int_equal(tn_lease_acquire(&f->t, &r, 1, &l, &rp, &retry),
                         TN_OK);
        top = l->token;
    }
    end_and_settle(&f->t, s, TN_SESSION_RELEASED, 50);
    assert_null(tn_session_find(&f->t, SID_A));
    /* Released, not expired: no lock delay; the next token is higher,
     * and every floor stays its last token. */
    struct tn_lease_entry *l = tn_lease_find(&f->t, "n4", 2);
    assert_int_equal(l->token, top);
    struct tn_acquire_req r = acq("n4", "next", 100, secret_b);
    bool rp;
    int64_t retry;
    assert_int_equal(tn_lease_acquire(&f->t, &r, 51, &l, &rp, &retry), TN_OK);
    assert_true(l->token > top);
}

static void test_session__expiry_keeps_each_lock_delay(void **state)
{
    struct fixture *f = *state;
    struct tn_session *s = open_session(&f->t, SID_A, "fleet", 100, 0);
    struct tn_acquire_req r = acq("d", "w", 0, secret_b);
    r.session_id = SID_A;
    r.session_secret = secret_a;
    r.lock_delay_ms = 300;
    struct tn_lease_entry *l;
    bool rp;
    int64_t retry = 0;
    assert_int_equal(tn_lease_acquire(&f->t, &r, 1, &l, &rp, &retry), TN_OK);
    grant_in(&f->t, "e", SID_A, 1); /* no lock delay */
    /* Ran out at 101, its end not recorded: the state machine settles the
     * lease by itself when an acquire meets it. */
    struct tn_acquire_req o = acq("d", "other", 100, secret_b);
    assert_int_equal(tn_lease_acquire(&f->t, &o, 150, &l, &rp, &retry),
                     TN_ELOCKDELAY);
    assert_int_equal(retry, 101 + 300 - 150);
    assert_null(l->session);
    assert_int_equal(s->n_leases, 1);
    assert_int_equal(tn_lease_acquire(&f->t, &o, 401, &l, &rp, &retry), TN_OK);
    o.name = "e";
    o.name_len = 1;
    assert_int_equal(tn_lease_acquire(&f->t, &o, 150, &l, &rp, &retry), TN_OK);
    assert_int_equal(s->n_leases, 0);
}

static void test_session__revoke_and_expiry_settle(void **state)
{
    struct fixture *f = *state;
    struct tn_session *s = open_session(&f->t, SID_A, "fleet", 100, 0);
    grant_in(&f->t, "r1", SID_A, 1);
    grant_in(&f->t, "r2", SID_A, 1);
    end_and_settle(&f->t, s, TN_SESSION_REVOKED, 20);
    s = open_session(&f->t, SID_B, "fleet", 100, 30);
    grant_in(&f->t, "x1", SID_B, 31);
    end_and_settle(&f->t, s, TN_SESSION_EXPIRED, s->expires_at_ms);
}

/* Any number of leases: each joins and leaves in O(1); the list stays
 * whole when leases leave from its middle, its head and its tail. */
static void test_session__list_add_remove_anywhere(void **state)
{
    struct fixture *f = *state;
    struct tn_session *s = open_session(&f->t, SID_A, "fleet", 1000, 0);
    enum { N = 2000 };
    char name[16];
    for (int i = 0; i < N; i++) {
        (void)snprintf(name, sizeof(name), "m%d", i);
        grant_in(&f->t, name, SID_A, 1);
    }
    assert_int_equal(list_length(s), N);
    size_t left = N;
    for (int i = 0; i < N; i += 3) { /* every third, in grant order */
        (void)snprintf(name, sizeof(name), "m%d", i);
        struct tn_lease_entry *l = tn_lease_find(&f->t, name, strlen(name));
        struct tn_token_req r = tok(name, l->token, secret_b);
        assert_int_equal(tn_lease_release(&f->t, &r, 2, &l), TN_OK);
        left--;
    }
    assert_int_equal(list_length(s), left);
    /* The head (the newest) and the tail (the oldest left). */
    struct tn_lease_entry *head = s->leases, *tail = head;
    while (tail->sess_next != NULL)
        tail = tail->sess_next;
    struct tn_token_req r = tok(head->name, head->token, secret_b);
    assert_int_equal(tn_lease_release(&f->t, &r, 3, &head), TN_OK);
    r = tok(tail->name, tail->token, secret_b);
    assert_int_equal(tn_lease_release(&f->t, &r, 3, &tail), TN_OK);
    assert_int_equal(list_length(s), left - 2);
}

static void test_session__list_in_id_order(void **state)
{
    struct fixture *f = *state;
    static const char *const ids[] = {
        "30000000000000000000000000000000", "10000000000000000000000000000000",
        "20000000000000000000000000000000", "40000000000000000000000000000000"};
    static const char *const owners[] = {"g/1", "g/2", "h/1", "g/3"};
    for (int i = 0; i < 4; i++)
        open_session(&f->t, ids[i], owners[i], 100, 0);
    struct tn_session *s4 = tn_session_find(&f->t, ids[3]);
    tn_session_end(&f->t, s4, TN_SESSION_RELEASED, 5); /* not listed */
    struct tn_session *out[2];
    bool more = false;
    struct tn_session_query q = {.prefix = "g/", .prefix_len = 2};
    size_t n = tn_session_list(&f->t, &q, 10, out, 2, &more);
    assert_int_equal(n, 2);
    assert_false(more);
    assert_string_equal(out[0]->id, ids[1]);
    assert_string_equal(out[1]->id, ids[0]);
    n = tn_session_list(&f->t, &(struct tn_session_query){0}, 10, out, 2,
                        &more);
    assert_int_equal(n, 2);
    assert_true(more);
    q = (struct tn_session_query){.after = ids[1], .after_len = 32};
    n = tn_session_list(&f->t, &q, 10, out, 2, &more);
    assert_string_equal(out[0]->id, ids[2]);
    assert_string_equal(out[1]->id, ids[0]);
    assert_false(more);
    n = tn_session_list(&f->t, &q, 200, out, 2, &more); /* all ran out */
    assert_int_equal(n, 0);
}

/* A load: a session restored, its leases put on its list. */
static void test_session__restore_and_attach(void **state)
{
    struct fixture *f = *state;
    struct tn_session img = {.row_id = 7,
                             .owner_id = (char *)"fleet",
                             .ttl_ms = 100,
                             .expires_at_ms = 500,
                             .end = TN_SESSION_LIVE};
    memcpy(img.id, SID_A, 32);
    struct tn_session *s = NULL;
    assert_int_equal(tn_session_restore(&f->t, &img, &s), TN_OK);
    assert_int_equal(f->t.last_session_row, 7);
    assert_int_equal(tn_session_restore(&f->t, &img, &s), TN_ECONFLICT);
    s = tn_session_find(&f->t, SID_A);
    struct tn_lease_entry li = {.name = (char *)"k",
                                .name_len = 1,
                                .owner_id = (char *)"w",
                                .token = 9,
                                .ttl_ms = 100,
                                .expires_at_ms = TN_LEASE_NO_EXPIRY,
                                .held = true};
    struct tn_lease_entry *l = NULL;
    assert_int_equal(tn_lease_restore(&f->t, &li, &l), TN_OK);
    tn_lease_attach(l, s);
    assert_true(tn_lease_is_live(l, 499));
    assert_false(tn_lease_is_live(l, 500));
    /* A second image of the name leaves the list (a later row says). */
    li.token = 10;
    assert_int_equal(tn_lease_restore(&f->t, &li, &l), TN_OK);
    assert_null(l->session);
    assert_int_equal(s->n_leases, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name)                                                                \
    cmocka_unit_test_setup_teardown(test_session__##name, setup, teardown)
        T(leases_live_exactly_as_long_as_it),
        T(acquire_needs_a_live_session),
        T(principal_binds_it),
        T(claim_again_is_the_same_grant),
        T(lease_renewed_only_by_its_session),
        T(delete_releases_every_lease),
        T(expiry_keeps_each_lock_delay),
        T(revoke_and_expiry_settle),
        T(list_add_remove_anywhere),
        T(list_in_id_order),
        T(restore_and_attach),
#undef T
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
