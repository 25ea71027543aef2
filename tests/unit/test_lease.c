/* SPDX-License-Identifier: MIT */
/* The lease state machine: table-driven cases.  The seeded random walk
 * and the retirement churn are in test_lease_walk.c.  The clock is the
 * test's: now_ms is passed in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tenure/err.h>

#include "lease/lease.h"
#include "lease_fixture.h"
#include "tn_test.h"

#include <cmocka.h>

/* One step of a table-driven case: an operation at now_ms and what it
 * must return. */
enum op { ACQ, RENEW, REL, FORCE };
struct step {
    enum op op;
    int64_t now_ms;
    const char *owner; /* ACQ */
    int64_t ttl_ms;    /* ACQ (and RENEW when > 0) */
    int token_of_step; /* RENEW/REL: token granted at that step (1-based) */
    bool wrong_secret; /* RENEW/REL */
    int want_rc;
    int64_t lock_delay_ms;  /* ACQ */
    const char *request_id; /* ACQ */
};

static void run_case(struct tn_lease_table *t, const struct step *steps,
                     size_t n)
{
    uint64_t tokens[16] = {0};
    for (size_t i = 0; i < n; i++) {
        const struct step *s = &steps[i];
        struct tn_lease_entry *l = NULL;
        int rc;
        if (s->op == ACQ) {
            struct tn_acquire_req r =
                acq("shard:8841", s->owner, s->ttl_ms, secret_a);
            r.lock_delay_ms = s->lock_delay_ms;
            r.request_id = s->request_id;
            bool replayed;
            int64_t retry = 0;
            rc = tn_lease_acquire(t, &r, s->now_ms, &l, &replayed, &retry);
            if (rc == TN_OK)
                tokens[i] = l->token;
        } else {
            uint64_t token = tokens[s->token_of_step - 1];
            struct tn_token_req r =
                tok("shard:8841", token, s->wrong_secret ? secret_b : secret_a);
            r.ttl_ms = s->op == RENEW ? s->ttl_ms : 0;
            r.force = s->op == FORCE;
            rc = s->op == RENEW ? tn_lease_renew(t, &r, s->now_ms, &l)
                                : tn_lease_release(t, &r, s->now_ms, &l);
            if (rc == TN_OK)
                assert_int_equal(l->token, token); /* renew keeps token */
        }
        if (rc != s->want_rc)
            fail_msg("step %zu: want %s, got %s", i + 1, tn_errname(s->want_rc),
                     tn_errname(rc));
    }
}

#define RUN(f, steps) run_case(&(f)->t, steps, sizeof(steps) / sizeof(steps[0]))

static void test_lease__held_then_conflict(void **state)
{
    static const struct step steps[] = {
        {ACQ, 0, "indexer-17", 1000, 0, false, TN_OK, 0, NULL},
        {ACQ, 1000, "indexer-04", 1000, 0, false, TN_ECONFLICT, 0, NULL},
        {ACQ, 1001, "indexer-04", 1000, 0, false, TN_OK, 0, NULL},
    };
    RUN((struct fixture *)*state, steps);
}

static void test_lease__renew_after_expiry_fails(void **state)
{
    static const struct step steps[] = {
        {ACQ, 0, "a", 100, 0, false, TN_OK, 0, NULL},
        {RENEW, 50, NULL, 0, 1, false, TN_OK, 0, NULL},
        {RENEW, 150, NULL, 0, 1, false, TN_OK, 0, NULL},
        {RENEW, 251, NULL, 0, 1, false, TN_ELOST, 0, NULL},
        {REL, 252, NULL, 0, 1, false, TN_ELOST, 0, NULL},
    };
    RUN((struct fixture *)*state, steps);
}

static void test_lease__wrong_secret_is_forbidden(void **state)
{
    static const struct step steps[] = {
        {ACQ, 0, "a", 100, 0, false, TN_OK, 0, NULL},
        {RENEW, 10, NULL, 0, 1, true, TN_EFORBIDDEN, 0, NULL},
        {REL, 10, NULL, 0, 1, true, TN_EFORBIDDEN, 0, NULL},
        {REL, 10, NULL, 0, 1, false, TN_OK, 0, NULL},
        {REL, 11, NULL, 0, 1, false, TN_ELOST, 0, NULL},
    };
    RUN((struct fixture *)*state, steps);
}

static void test_lease__release_never_touches_newer_grant(void **state)
{
    static const struct step steps[] = {
        {ACQ, 0, "a", 100, 0, false, TN_OK, 0, NULL},
        {ACQ, 101, "b", 100, 0, false, TN_OK, 0, NULL},
        {REL, 102, NULL, 0, 1, false, TN_ELOST, 0, NULL},
        {RENEW, 102, NULL, 0, 1, false, TN_ELOST, 0, NULL},
        {ACQ, 103, "c", 100, 0, false, TN_ECONFLICT, 0, NULL},
    };
    RUN((struct fixture *)*state, steps);
}

static void test_lease__lock_delay_after_expiry_not_release(void **state)
{
    static const struct step steps[] = {
        {ACQ, 0, "a", 100, 0, false, TN_OK, 500, NULL},
        {ACQ, 101, "b", 100, 0, false, TN_ELOCKDELAY, 0, NULL},
        {ACQ, 600, "b", 100, 0, false, TN_ELOCKDELAY, 0, NULL},
        {ACQ, 601, "b", 100, 0, false, TN_OK, 500, NULL},
        {REL, 602, NULL, 0, 4, false, TN_OK, 0, NULL},
        {ACQ, 602, "c", 100, 0, false, TN_OK, 0, NULL},
    };
    RUN((struct fixture *)*state, steps);
}

static void test_lease__request_id_retry_returns_same_grant(void **state)
{
    struct fixture *f = *state;
    struct tn_acquire_req r = acq("n", "w1", 100, secret_a);
    r.request_id = "req-1";
    struct tn_lease_entry *l;
    bool replayed;
    int64_t retry;
    assert_int_equal(tn_lease_acquire(&f->t, &r, 0, &l, &replayed, &retry),
                     TN_OK);
    uint64_t token = l->token;
    assert_false(replayed);
    assert_int_equal(tn_lease_acquire(&f->t, &r, 50, &l, &replayed, &retry),
                     TN_OK);
    assert_true(replayed);
    assert_int_equal(l->token, token);
    r.owner_id = "w2"; /* same request id, other owner: no replay */
    assert_int_equal(tn_lease_acquire(&f->t, &r, 50, &l, &replayed, &retry),
                     TN_ECONFLICT);
    r.owner_id = "w1"; /* after the grant ended: a new acquire */
    assert_int_equal(tn_lease_acquire(&f->t, &r, 101, &l, &replayed, &retry),
                     TN_OK);
    assert_false(replayed);
    assert_true(l->token > token);
}

/* Is p inside the entry l (the room after the name)? */
static bool in_entry(const struct tn_lease_entry *l, const char *p)
{
    const char *room = l->str + l->name_len + 1;
    return p >= room && p < room + l->str_room;
}

static void test_lease__grant_strings_follow_each_grant(void **state)
{
    struct fixture *f = *state;
    struct tn_acquire_req r = acq("shard:1", "o1", 100, secret_a);
    r.request_id = "r1";
    r.principal = "p1";
    struct tn_lease_entry *l, *first;
    bool replayed;
    int64_t retry;
    assert_int_equal(tn_lease_acquire(&f->t, &r, 0, &first, &replayed, &retry),
                     TN_OK);
    assert_string_equal(first->name, "shard:1");
    assert_string_equal(first->owner_id, "o1");
    assert_string_equal(first->request_id, "r1");
    assert_string_equal(first->principal, "p1");
    assert_true(in_entry(first, first->owner_id));

    struct tn_token_req rel = tok("shard:1", first->token, secret_a);
    assert_int_equal(tn_lease_release(&f->t, &rel, 1, &l), TN_OK);
    assert_null(l->request_id); /* the grant's request id ends with it */
    assert_string_equal(l->owner_id, "o1");

    /* Strings longer than the room the entry was made with. */
    char owner[129], rid[129], who[200];
    memset(owner, 'o', sizeof(owner) - 1);
    owner[sizeof(owner) - 1] = '\0';
    memset(rid, 'r', sizeof(rid) - 1);
    rid[sizeof(rid) - 1] = '\0';
    memset(who, 'p', sizeof(who) - 1);
    who[sizeof(who) - 1] = '\0';
    r = acq("shard:1", owner, 100, secret_b);
    r.request_id = rid;
    r.principal = who;
    assert_int_equal(tn_lease_acquire(&f->t, &r, 2, &l, &replayed, &retry),
                     TN_OK);
    assert_ptr_equal(l, first); /* entries never move */
    assert_string_equal(l->name, "shard:1");
    assert_string_equal(l->owner_id, owner);
    assert_string_equal(l->request_id, rid);
    assert_string_equal(l->principal, who);
    assert_false(in_entry(l, l->owner_id));
    assert_int_equal(tn_lease_acquire(&f->t, &r, 3, &l, &replayed, &retry),
                     TN_OK);
    assert_true(replayed); /* the long request id still matches */

    /* Back to short strings: inline again (the block is freed; a leak
     * would fail the sanitizer build). */
    struct tn_token_req force = {.name = "shard:1", .name_len = 7};
    force.force = true;
    assert_int_equal(tn_lease_release(&f->t, &force, 4, &l), TN_OK);
    r = acq("shard:1", "o2", 100, secret_a);
    assert_int_equal(tn_lease_acquire(&f->t, &r, 5, &l, &replayed, &retry),
                     TN_OK);
    assert_ptr_equal(l, first);
    assert_string_equal(l->owner_id, "o2");
    assert_null(l->request_id);
    assert_null(l->principal);
    assert_true(in_entry(l, l->owner_id));
}

static void test_lease__restore_copies_strings(void **state)
{
    struct fixture *f = *state;
    char name[] = "restored", owner[] = "owner-a", rid[] = "rid-a";
    struct tn_lease_entry img;
    memset(&img, 0, sizeof(img));
    img.name = name;
    img.name_len = (uint32_t)strlen(name);
    img.owner_id = owner;
    img.request_id = rid;
    img.token = 41;
    img.ttl_ms = 1000;
    img.expires_at_ms = 5000;
    img.held = true;
    struct tn_lease_entry *l;
    assert_int_equal(tn_lease_restore(&f->t, &img, &l), TN_OK);
    memset(name, 'x', strlen(name)); /* the table must hold copies */
    memset(owner, 'x', strlen(owner));
    memset(rid, 'x', strlen(rid));
    l = tn_lease_find(&f->t, "restored", 8);
    assert_non_null(l);
    assert_string_equal(l->name, "restored");
    assert_string_equal(l->owner_id, "owner-a");
    assert_string_equal(l->request_id, "rid-a");
    assert_null(l->principal);
    assert_int_equal(l->token, 41);
    assert_int_equal(f->t.last_token, 41);
    assert_true(tn_lease_is_live(l, 4999));

    /* A row without owner but with a request id; then one whose strings
     * do not fit the room. */
    char big[700];
    memset(big, 'b', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    char name2[] = "other", rid2[] = "only-rid";
    struct tn_lease_entry img2;
    memset(&img2, 0, sizeof(img2));
    img2.name = name2;
    img2.name_len = 5;
    img2.request_id = rid2;
    img2.token = 7;
    assert_int_equal(tn_lease_restore(&f->t, &img2, &l), TN_OK);
    assert_string_equal(l->owner_id, "");
    assert_string_equal(l->request_id, "only-rid");
    img2.owner_id = big;
    img2.principal = big;
    struct tn_lease_entry *again;
    assert_int_equal(tn_lease_restore(&f->t, &img2, &again), TN_OK);
    assert_ptr_equal(again, l);
    assert_string_equal(l->owner_id, big);
    assert_string_equal(l->principal, big);
    assert_string_equal(l->request_id, "only-rid");
    assert_int_equal(f->t.last_token, 41);
    assert_int_equal(f->t.map.count, 2);
}

/* Thousands of entries of every name length: several slabs and several
 * doublings of the bucket array; every entry keeps its address, name and
 * owner. */
static void test_lease__many_entries_survive_growth(void **state)
{
    struct fixture *f = *state;
    enum { N = 6000 };
    static struct tn_lease_entry *seen[N];
    char name[300], owner[40];
    int rehashing_seen = 0;
    for (int i = 0; i < N; i++) {
        int n = snprintf(name, sizeof(name), "%d-", i);
        size_t len = (size_t)n + (size_t)(i % 240);
        memset(name + n, 'a' + i % 26, len - (size_t)n);
        name[len] = '\0';
        (void)snprintf(owner, sizeof(owner), "owner-%d", i % 1000);
        struct tn_acquire_req r = acq(name, owner, 100, secret_a);
        bool replayed;
        int64_t retry;
        assert_int_equal(
            tn_lease_acquire(&f->t, &r, 0, &seen[i], &replayed, &retry), TN_OK);
        assert_int_equal((uintptr_t)seen[i] % sizeof(void *), 0);
        /* Mid-rehash, entries in either bucket array are found, counted
         * and listed. */
        const struct tn_lease_entry *half = seen[i / 2];
        assert_ptr_equal(tn_lease_find(&f->t, half->name, half->name_len),
                         half);
        if (f->t.map.old != NULL)
            rehashing_seen++;
        if (i % 97 == 0) {
            static const struct tn_lease_entry *out[N];
            bool more;
            assert_int_equal(tn_lease_count_live(&f->t, 99), (size_t)i + 1);
            assert_int_equal(
                tn_lease_list(&f->t, "", 0, NULL, 0, 99, out, N, &more),
                (size_t)i + 1);
        }
    }
    assert_true(rehashing_seen > 0); /* the checks above ran mid-rehash */
    assert_int_equal(f->t.map.count, N);
    assert_true(f->t.map.mask + 1 >= N);
    for (int i = 0; i < N; i++) {
        int n = snprintf(name, sizeof(name), "%d-", i);
        size_t len = (size_t)n + (size_t)(i % 240);
        memset(name + n, 'a' + i % 26, len - (size_t)n);
        name[len] = '\0';
        (void)snprintf(owner, sizeof(owner), "owner-%d", i % 1000);
        struct tn_lease_entry *l = tn_lease_find(&f->t, name, len);
        assert_ptr_equal(l, seen[i]);
        assert_int_equal(l->name_len, len);
        assert_string_equal(l->name, name);
        assert_string_equal(l->owner_id, owner);
        assert_int_equal(l->token, (uint64_t)i + 1);
    }
    assert_int_equal(tn_lease_count_live(&f->t, 99), N);
}

static void test_lease__force_release_ends_live_grant(void **state)
{
    static const struct step steps[] = {
        {ACQ, 0, "a", 100, 0, false, TN_OK, 0, NULL},
        {FORCE, 10, NULL, 0, 1, true, TN_OK, 0, NULL},
        {FORCE, 11, NULL, 0, 1, true, TN_ELOST, 0, NULL},
        {ACQ, 12, "b", 100, 0, false, TN_OK, 0, NULL},
    };
    RUN((struct fixture *)*state, steps);
}

static void test_lease__floor_survives_release(void **state)
{
    struct fixture *f = *state;
    struct tn_acquire_req r = acq("x", "w", 100, secret_a);
    struct tn_lease_entry *l;
    bool replayed;
    int64_t retry;
    assert_int_equal(tn_lease_acquire(&f->t, &r, 0, &l, &replayed, &retry),
                     TN_OK);
    struct tn_token_req t = tok("x", l->token, secret_a);
    assert_int_equal(tn_lease_release(&f->t, &t, 1, &l), TN_OK);
    l = tn_lease_find(&f->t, "x", 1);
    assert_non_null(l);
    assert_int_equal(l->token, t.token); /* the floor stays T */
    assert_false(tn_lease_is_live(l, 1));
}

static void test_lease__list_in_name_order_with_paging(void **state)
{
    struct fixture *f = *state;
    const char *names[] = {"b", "a", "shard:2", "shard:10", "shard:1", "c"};
    for (size_t i = 0; i < 6; i++) {
        struct tn_acquire_req r = acq(names[i], "w", 100, secret_a);
        struct tn_lease_entry *l;
        bool rp;
        int64_t retry;
        assert_int_equal(tn_lease_acquire(&f->t, &r, 0, &l, &rp, &retry),
                         TN_OK);
    }
    const struct tn_lease_entry *out[2];
    bool more;
    size_t n = tn_lease_list(&f->t, "shard:", 6, NULL, 0, 1, out, 2, &more);
    assert_int_equal(n, 2);
    assert_string_equal(out[0]->name, "shard:1");
    assert_string_equal(out[1]->name, "shard:10");
    assert_true(more);
    n = tn_lease_list(&f->t, "shard:", 6, "shard:10", 8, 1, out, 2, &more);
    assert_int_equal(n, 1);
    assert_string_equal(out[0]->name, "shard:2");
    assert_false(more);
    n = tn_lease_list(&f->t, "", 0, NULL, 0, 101, out, 2, &more);
    assert_int_equal(n, 0); /* all expired at 101 */
}

/* Row ids: a given-back id is handed out again before a new one; the
 * counter only grows; a table loaded afresh has nothing given back. */
static void test_lease__row_ids_reuse_given_back_first(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(tn_lease_next_row(&f->t), 1);
    assert_int_equal(tn_lease_next_row(&f->t), 2);
    assert_int_equal(tn_lease_next_row(&f->t), 3);
    tn_lease_give_back_row(&f->t, 2);
    tn_lease_give_back_row(&f->t, 1);
    assert_int_equal(tn_lease_next_row(&f->t), 1);
    assert_int_equal(tn_lease_next_row(&f->t), 2);
    assert_int_equal(tn_lease_next_row(&f->t), 4);
    tn_lease_give_back_row(&f->t, 4);
    tn_lease_table_release(&f->t);
    assert_int_equal(tn_lease_table_init(&f->t, 16), TN_OK);
    f->t.last_row_id = 7; /* as a load from the file sets it */
    assert_int_equal(tn_lease_next_row(&f->t), 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lease__held_then_conflict, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_lease__renew_after_expiry_fails,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_lease__wrong_secret_is_forbidden,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_lease__release_never_touches_newer_grant, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_lease__lock_delay_after_expiry_not_release, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_lease__request_id_retry_returns_same_grant, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_lease__grant_strings_follow_each_grant, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lease__restore_copies_strings,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_lease__many_entries_survive_growth,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_lease__force_release_ends_live_grant, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lease__floor_survives_release,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_lease__list_in_name_order_with_paging, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_lease__row_ids_reuse_given_back_first, setup, teardown),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
