/* SPDX-License-Identifier: MIT */
/* Fence kit unit tests, continued from test_fence.c: the batch fence (one
 * transaction's records decided in memory) against the SQLite fence, the
 * prepared SQLite fence, and the proof cache. */
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/fence.h>
#include <tenure/fence_sqlite.h>

#include "tn_test.h"

#include <cmocka.h>

static sqlite3 *open_db(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(tn_fence_sqlite_migrate(db, NULL), 0);
    return db;
}

static void exec_ok(sqlite3 *db, const char *sql)
{
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
}

static struct tn_fence_record rec(const char *key, const char *token)
{
    struct tn_fence_record r = {0};
    r.key = key;
    r.key_len = key != NULL ? strlen(key) : 0;
    r.token = token;
    r.token_len = token != NULL ? strlen(token) : 0;
    r.token_count = token != NULL ? 1 : 0;
    return r;
}

/* ---- batch fence ----------------------------------------------------- */

/* The batch's check-and-advance: the SQLite fence on ctx's connection,
 * counting the calls that reach it. */
struct sq_ctx {
    sqlite3 *db; /* the connection whose transaction is open */
    int calls;   /* advances that reached SQLite */
};

static int sq_advance(void *ctx, const char *resource, size_t len,
                      uint64_t token, uint64_t *hwm_before_out,
                      struct tn_errmsg *em)
{
    struct sq_ctx *c = ctx;
    c->calls++;
    return tn_fence_sqlite_advance(c->db, resource, len, token, hwm_before_out,
                                   em);
}

static uint64_t mark_of(sqlite3 *db, const char *name)
{
    uint64_t hwm = 0;
    assert_int_equal(tn_fence_sqlite_get(db, name, strlen(name), &hwm, NULL),
                     0);
    return hwm;
}

/* Later records of a resource are decided in memory; flush writes only the
 * final mark, once. */
static void test_fence__batch_decides_in_memory_flushes_final_mark(void **state)
{
    (void)state;
    sqlite3 *db = open_db(":memory:");
    struct sq_ctx c = {.db = db};
    struct tn_fence_batch *b = tn_fence_batch_new(16);
    assert_non_null(b);
    struct tn_errmsg em = {{0}};
    uint64_t before = 99;
    exec_ok(db, "BEGIN");
    tn_fence_batch_begin(b, sq_advance, &c);
    assert_int_equal(tn_fence_batch_advance(b, "a", 1, 5, &before, &em), 0);
    assert_int_equal(before, 0);
    assert_int_equal(tn_fence_batch_advance(b, "a", 1, 7, &before, &em), 0);
    assert_int_equal(before, 5);
    assert_int_equal(tn_fence_batch_advance(b, "a", 1, 6, &before, &em),
                     TN_ESTALE);
    assert_int_equal(before, 7);
    assert_int_equal(tn_fence_batch_advance(b, "a", 1, 9, &before, &em), 0);
    assert_int_equal(tn_fence_batch_advance(b, "a", 1, 9, &before, &em), 0);
    assert_int_equal(before, 9);
    assert_int_equal(c.calls, 1);
    assert_int_equal(mark_of(db, "a"), 5); /* not yet written */
    assert_int_equal(tn_fence_batch_flush(b, &em), 0);
    assert_int_equal(c.calls, 2);
    assert_int_equal(mark_of(db, "a"), 9);
    /* Nothing moved since: a second flush writes nothing. */
    assert_int_equal(tn_fence_batch_flush(b, &em), 0);
    assert_int_equal(c.calls, 2);
    exec_ok(db, "COMMIT");
    assert_int_equal(mark_of(db, "a"), 9);
    tn_fence_batch_free(b);
    tn_fence_batch_free(NULL);
    sqlite3_close(db);
}

/* Each begin forgets the marks held: another writer between two
 * transactions, or a rolled-back batch, is seen by the next batch. */
static void test_fence__batch_begin_forgets_marks(void **state)
{
    (void)state;
    sqlite3 *db = open_db(":memory:");
    struct sq_ctx c = {.db = db};
    struct tn_fence_batch *b = tn_fence_batch_new(4);
    assert_non_null(b);
    uint64_t before = 0;
    exec_ok(db, "BEGIN");
    tn_fence_batch_begin(b, sq_advance, &c);
    assert_int_equal(tn_fence_batch_advance(b, "a", 1, 10, NULL, NULL), 0);
    assert_int_equal(tn_fence_batch_flush(b, NULL), 0);
    exec_ok(db, "COMMIT");
    /* Another writer raises the mark between our transactions. */
    exec_ok(db, "BEGIN");
    assert_int_equal(tn_fence_sqlite_advance(db, "a", 1, 100, NULL, NULL), 0);
    exec_ok(db, "COMMIT");
    exec_ok(db, "BEGIN");
    tn_fence_batch_begin(b, sq_advance, &c);
    assert_int_equal(tn_fence_batch_advance(b, "a", 1, 50, &before, NULL),
                     TN_ESTALE);
    assert_int_equal(before, 100);
    assert_int_equal(tn_fence_batch_advance(b, "a", 1, 200, NULL, NULL), 0);
    assert_int_equal(tn_fence_batch_flush(b, NULL), 0);
    exec_ok(db, "ROLLBACK");
    /* The rolled-back 200 is gone, from the table and from the batch. */
    exec_ok(db, "BEGIN");
    tn_fence_batch_begin(b, sq_advance, &c);
    assert_int_equal(tn_fence_batch_advance(b, "a", 1, 150, &before, NULL), 0);
    assert_int_equal(before, 100);
    assert_int_equal(tn_fence_batch_flush(b, NULL), 0);
    exec_ok(db, "COMMIT");
    assert_int_equal(mark_of(db, "a"), 150);
    /* Invalid input, and use without a begin, are refused. */
    assert_int_equal(tn_fence_batch_advance(b, "", 0, 1, NULL, NULL),
                     TN_EINVAL);
    assert_int_equal(
        tn_fence_batch_advance(b, "a", 1, TN_FENCE_TOKEN_MAX + 1, NULL, NULL),
        TN_EINVAL);
    struct tn_fence_batch *fresh = tn_fence_batch_new(4);
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_fence_batch_advance(fresh, "a", 1, 1, NULL, &em),
                     TN_EINVAL);
    assert_int_equal(tn_fence_batch_flush(fresh, &em), TN_EINVAL);
    tn_fence_batch_free(fresh);
    tn_fence_batch_free(b);
    sqlite3_close(db);
}

/* Seeded random walk over batches of random size: one advance per record
 * on one database, the batch fence on another, must give the same decision
 * and hwm_before for every record and the same marks after every commit,
 * also when a batch holds more resources than the batch's cap. */
static void test_fence__batch_agrees_with_sqlite(void **state)
{
    (void)state;
    uint64_t seed = 0xba7c4f3e1ull;
    uint64_t x = seed;
    sqlite3 *ref = open_db(":memory:");
    sqlite3 *db = open_db(":memory:");
    struct sq_ctx c = {.db = db};
    struct tn_fence_batch *b = tn_fence_batch_new(5);
    assert_non_null(b);
    /* Names outlive the batch (the batch borrows them). */
    static const char *const names[] = {"r0", "r1", "r2", "r3", "r4",
                                        "r5", "r6", "r7", "r8"};
    int step = 0;
    for (int batch = 0; batch < 200; batch++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int len = (int)(x % 60) + 1;
        exec_ok(ref, "BEGIN");
        exec_ok(db, "BEGIN");
        tn_fence_batch_begin(b, sq_advance, &c);
        for (int i = 0; i < len; i++, step++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            const char *name = names[x % 9];
            size_t n = strlen(name);
            uint64_t token = (x >> 8) % 40 + (uint64_t)step / 50;
            uint64_t b1 = 0;
            uint64_t b2 = 0;
            int want =
                tn_fence_sqlite_advance(ref, name, (size_t)n, token, &b1, NULL);
            int got =
                tn_fence_batch_advance(b, name, (size_t)n, token, &b2, NULL);
            if (want != got || b1 != b2)
                fail_msg("seed %llu step %d: want %d/%llu got %d/%llu",
                         (unsigned long long)seed, step, want,
                         (unsigned long long)b1, got, (unsigned long long)b2);
        }
        assert_int_equal(tn_fence_batch_flush(b, NULL), 0);
        exec_ok(ref, "COMMIT");
        exec_ok(db, "COMMIT");
        for (unsigned r = 0; r < 9; r++)
            assert_int_equal(mark_of(ref, names[r]), mark_of(db, names[r]));
    }
    /* Fewer calls reached SQLite than there were records. */
    assert_true(c.calls < step);
    tn_fence_batch_free(b);
    sqlite3_close(ref);
    sqlite3_close(db);
}

/* The prepared fence decides exactly as tn_fence_sqlite_advance, and also
 * refuses to run outside a transaction. */
static void test_fence__sqlite_prepared_agrees(void **state)
{
    (void)state;
    sqlite3 *ref = open_db(":memory:");
    sqlite3 *db = open_db(":memory:");
    struct tn_fence_sqlite *f = NULL;
    assert_int_equal(tn_fence_sqlite_prepare(db, &f, NULL), 0);
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_fence_sqlite_advance_prepared(f, "a", 1, 1, NULL, &em),
                     TN_EINVAL);
    assert_non_null(strstr(em.text, "transaction"));
    uint64_t x = 0x5eed1234ull;
    exec_ok(ref, "BEGIN");
    exec_ok(db, "BEGIN");
    for (int i = 0; i < 3000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        char name[8];
        int n = snprintf(name, sizeof(name), "p%u", (unsigned)(x % 7));
        uint64_t token = (x >> 8) % 50 + (uint64_t)i / 100;
        uint64_t b1 = 0;
        uint64_t b2 = 0;
        uint64_t *out = (x & 256) ? &b2 : NULL;
        int want =
            tn_fence_sqlite_advance(ref, name, (size_t)n, token, &b1, NULL);
        int got = tn_fence_sqlite_advance_prepared(f, name, (size_t)n, token,
                                                   out, NULL);
        assert_int_equal(want, got);
        if (out != NULL)
            assert_int_equal(b1, b2);
    }
    assert_int_equal(tn_fence_sqlite_advance_prepared(f, "", 0, 1, NULL, NULL),
                     TN_EINVAL);
    exec_ok(ref, "COMMIT");
    exec_ok(db, "COMMIT");
    for (unsigned r = 0; r < 7; r++) {
        char name[8];
        (void)snprintf(name, sizeof(name), "p%u", r);
        assert_int_equal(mark_of(ref, name), mark_of(db, name));
    }
    tn_fence_sqlite_finalize(f);
    tn_fence_sqlite_finalize(NULL);
    sqlite3_close(ref);
    sqlite3_close(db);
}

/* ---- proof cache ----------------------------------------------------- */

static void test_fence__proof_cache_verifies_once(void **state)
{
    (void)state;
    uint8_t pk[32];
    uint8_t sk[64];
    assert_int_equal(tn_proof_keypair(pk, sk), 0);
    char hex[129];
    assert_int_equal(tn_proof_sign(sk, "shard:8841", 10, 403, hex), 0);
    struct tn_proof_cache *c = tn_proof_cache_new(pk, 64);
    assert_non_null(c);
    uint64_t hits = 9;
    uint64_t misses = 9;
    for (int i = 0; i < 3; i++)
        assert_int_equal(
            tn_proof_cache_verify(c, "shard:8841", 10, 403, hex, 128), 0);
    tn_proof_cache_stats(c, &hits, &misses);
    assert_int_equal(misses, 1);
    assert_int_equal(hits, 2);
    /* The cached proof does not vouch for another token or name. */
    assert_int_equal(tn_proof_cache_verify(c, "shard:8841", 10, 404, hex, 128),
                     TN_ESIGNATURE);
    assert_int_equal(tn_proof_cache_verify(c, "shard:8842", 10, 403, hex, 128),
                     TN_ESIGNATURE);
    /* Other bytes for the same grant are verified, and a bad one fails
     * every time (failures are not cached). */
    char bad[129];
    memcpy(bad, hex, sizeof(bad));
    bad[127] = bad[127] == '0' ? '1' : '0';
    for (int i = 0; i < 2; i++)
        assert_int_equal(
            tn_proof_cache_verify(c, "shard:8841", 10, 403, bad, 128),
            TN_ESIGNATURE);
    assert_int_equal(tn_proof_cache_verify(c, "shard:8841", 10, 403, hex, 127),
                     TN_ESIGNATURE);
    assert_int_equal(tn_proof_cache_verify(c, "shard:8841", 10, 403, NULL, 0),
                     TN_ESIGNATURE);
    tn_proof_cache_stats(c, &hits, &misses);
    assert_int_equal(hits, 2);
    assert_int_equal(misses, 5);
    /* A key that did not sign: the cache of another key says no. */
    uint8_t pk2[32];
    uint8_t sk2[64];
    assert_int_equal(tn_proof_keypair(pk2, sk2), 0);
    struct tn_proof_cache *c2 = tn_proof_cache_new(pk2, 1);
    assert_int_equal(tn_proof_cache_verify(c2, "shard:8841", 10, 403, hex, 128),
                     TN_ESIGNATURE);
    tn_proof_cache_free(c2);
    tn_proof_cache_free(c);
    tn_proof_cache_free(NULL);
}

/* The cached record check gives the reasons of tn_fence_record_check. */
static void test_fence__record_check_cached_matches(void **state)
{
    (void)state;
    uint8_t pk[32];
    uint8_t sk[64];
    assert_int_equal(tn_proof_keypair(pk, sk), 0);
    char hex[129];
    assert_int_equal(tn_proof_sign(sk, "shard:8841", 10, 403, hex), 0);
    struct tn_proof_cache *c = tn_proof_cache_new(pk, 16);
    struct tn_fence_record rs[6];
    rs[0] = rec("shard:8841", "403");
    rs[1] = rs[0];
    rs[1].proof = hex;
    rs[1].proof_len = 128;
    rs[1].proof_count = 1;
    rs[2] = rs[1];
    rs[2].proof_count = 2; /* repeated proof headers */
    rs[3] = rs[1];
    rs[3].token = "404";
    rs[4] = rec(NULL, "403");
    rs[5] = rs[1];
    rs[5].claim = "2";
    rs[5].claim_len = 1;
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof(rs) / sizeof(rs[0]); i++) {
            uint64_t t1 = 0;
            uint64_t t2 = 0;
            bool c1 = false;
            bool c2 = false;
            assert_int_equal(tn_fence_record_check_cached(&rs[i], c, &t1, &c1),
                             tn_fence_record_check(&rs[i], pk, &t2, &c2));
            assert_int_equal(t1, t2);
            assert_int_equal(c1, c2);
            assert_int_equal(
                tn_fence_record_check_cached(&rs[i], NULL, &t1, &c1),
                tn_fence_record_check(&rs[i], NULL, &t2, &c2));
        }
    }
    tn_proof_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_fence__batch_decides_in_memory_flushes_final_mark),
        cmocka_unit_test(test_fence__batch_begin_forgets_marks),
        cmocka_unit_test(test_fence__batch_agrees_with_sqlite),
        cmocka_unit_test(test_fence__sqlite_prepared_agrees),
        cmocka_unit_test(test_fence__proof_cache_verifies_once),
        cmocka_unit_test(test_fence__record_check_cached_matches),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
