/* SPDX-License-Identifier: MIT */
/* Fence kit unit tests: token parsing, lease names, the check-and-advance
 * rule on SQLite (:memory: and a real file) and in memory, proofs and key
 * files, and the record check the materializer relies on. */
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tenure/fence.h>
#include <tenure/fence_kafka.h>
#include <tenure/fence_mem.h>
#include <tenure/fence_sqlite.h>

#include <cmocka.h>

static void test_fence__parse_token_accepts_plain_decimal(void **state)
{
    (void)state;
    uint64_t v = 99;
    assert_int_equal(tn_fence_parse_token("0", 1, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(tn_fence_parse_token("403", 3, &v), 0);
    assert_int_equal(v, 403);
    assert_int_equal(tn_fence_parse_token("9007199254740992", 16, &v), 0);
    assert_int_equal(v, TN_FENCE_TOKEN_MAX);
    /* Not NUL-terminated: only len bytes count. */
    assert_int_equal(tn_fence_parse_token("12junk", 2, &v), 0);
    assert_int_equal(v, 12);
}

static void test_fence__parse_token_rejects_junk(void **state)
{
    (void)state;
    static const char *const bad[] = {"",
                                      "+1",
                                      "-1",
                                      " 1",
                                      "1 ",
                                      "01",
                                      "1.0",
                                      "0x10",
                                      "1e3",
                                      "12x",
                                      "9007199254740993",
                                      "18446744073709551616",
                                      "99999999999999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        uint64_t v = 7;
        assert_int_equal(tn_fence_parse_token(bad[i], strlen(bad[i]), &v),
                         TN_EINVAL);
        assert_int_equal(v, 7);
    }
    uint64_t v = 0;
    assert_int_equal(tn_fence_parse_token(NULL, 0, &v), TN_EINVAL);
    assert_int_equal(tn_fence_parse_token("1\0", 2, &v), TN_EINVAL);
}

static void test_fence__format_token_round_trips(void **state)
{
    (void)state;
    static const uint64_t vals[] = {0, 1, 9, 10, 403, TN_FENCE_TOKEN_MAX};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        char buf[21];
        size_t n = tn_fence_format_token(vals[i], buf);
        uint64_t back = 1;
        assert_int_equal(strlen(buf), n);
        assert_int_equal(tn_fence_parse_token(buf, n, &back), 0);
        assert_true(back == vals[i]);
    }
}

static void test_fence__name_validation(void **state)
{
    (void)state;
    char long_name[TN_FENCE_NAME_MAX + 1];
    memset(long_name, 'a', sizeof(long_name));
    assert_true(tn_fence_name_is_valid("shard:8841", 10));
    assert_true(tn_fence_name_is_valid("\xc3\xa9t\xc3\xa9", 5));
    assert_true(tn_fence_name_is_valid(long_name, TN_FENCE_NAME_MAX));
    assert_false(tn_fence_name_is_valid(long_name, TN_FENCE_NAME_MAX + 1));
    assert_false(tn_fence_name_is_valid("", 0));
    assert_false(tn_fence_name_is_valid(NULL, 3));
    assert_false(tn_fence_name_is_valid("a\nb", 3));
    assert_false(tn_fence_name_is_valid("a\0b", 3));
    assert_false(tn_fence_name_is_valid("a\x7f", 2));
    assert_false(tn_fence_name_is_valid("\xc2\x85", 2));     /* C1 control */
    assert_false(tn_fence_name_is_valid("\xc3", 1));         /* truncated */
    assert_false(tn_fence_name_is_valid("\xc0\xaf", 2));     /* overlong */
    assert_false(tn_fence_name_is_valid("\xed\xa0\x80", 3)); /* surrogate */
    assert_false(tn_fence_name_is_valid("\xff", 1));
}

/* ---- SQLite ---------------------------------------------------------- */

static sqlite3 *open_db(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(tn_fence_sqlite_migrate(db, NULL), 0);
    /* Migration is idempotent. */
    assert_int_equal(tn_fence_sqlite_migrate(db, NULL), 0);
    return db;
}

static void exec_ok(sqlite3 *db, const char *sql)
{
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
}

/* The rule on one resource: equal admitted, lower rejected, never down. */
static void check_rule(sqlite3 *db)
{
    struct tn_errmsg em = {{0}};
    uint64_t before = 99;
    exec_ok(db, "BEGIN");
    assert_int_equal(
        tn_fence_sqlite_advance(db, "shard:8841", 10, 402, &before, &em), 0);
    assert_int_equal(before, 0);
    assert_int_equal(
        tn_fence_sqlite_advance(db, "shard:8841", 10, 402, &before, &em), 0);
    assert_int_equal(before, 402);
    assert_int_equal(
        tn_fence_sqlite_advance(db, "shard:8841", 10, 403, &before, &em), 0);
    assert_int_equal(
        tn_fence_sqlite_advance(db, "shard:8841", 10, 402, &before, &em),
        TN_ESTALE);
    assert_int_equal(before, 403);
    /* Another resource has its own mark. */
    assert_int_equal(tn_fence_sqlite_advance(db, "shard:1", 7, 5, NULL, &em),
                     0);
    exec_ok(db, "COMMIT");
    uint64_t hwm = 0;
    assert_int_equal(tn_fence_sqlite_get(db, "shard:8841", 10, &hwm, &em), 0);
    assert_int_equal(hwm, 403);
    assert_int_equal(tn_fence_sqlite_get(db, "none", 4, &hwm, &em), 0);
    assert_int_equal(hwm, 0);
}

static void test_fence__sqlite_memory_rule(void **state)
{
    (void)state;
    sqlite3 *db = open_db(":memory:");
    check_rule(db);
    sqlite3_close(db);
}

static void test_fence__sqlite_requires_transaction(void **state)
{
    (void)state;
    sqlite3 *db = open_db(":memory:");
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_fence_sqlite_advance(db, "a", 1, 1, NULL, &em),
                     TN_EINVAL);
    assert_non_null(strstr(em.text, "transaction"));
    sqlite3_close(db);
}

static void test_fence__sqlite_rollback_undoes_mark(void **state)
{
    (void)state;
    sqlite3 *db = open_db(":memory:");
    exec_ok(db, "BEGIN");
    assert_int_equal(tn_fence_sqlite_advance(db, "a", 1, 10, NULL, NULL), 0);
    exec_ok(db, "COMMIT");
    exec_ok(db, "BEGIN");
    assert_int_equal(tn_fence_sqlite_advance(db, "a", 1, 50, NULL, NULL), 0);
    exec_ok(db, "ROLLBACK");
    uint64_t hwm = 0;
    assert_int_equal(tn_fence_sqlite_get(db, "a", 1, &hwm, NULL), 0);
    assert_int_equal(hwm, 10);
    sqlite3_close(db);
}

static void test_fence__sqlite_file_persists_mark(void **state)
{
    (void)state;
    char path[] = "/tmp/tn-fence-test-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    sqlite3 *db = open_db(path);
    check_rule(db);
    sqlite3_close(db);
    /* A second connection (another process would see the same) agrees,
     * and a stale write after reopening is still rejected. */
    db = open_db(path);
    exec_ok(db, "BEGIN");
    assert_int_equal(
        tn_fence_sqlite_advance(db, "shard:8841", 10, 402, NULL, NULL),
        TN_ESTALE);
    exec_ok(db, "COMMIT");
    sqlite3_close(db);
    unlink(path);
}

/* ---- in-memory filter ------------------------------------------------ */

static void test_fence__mem_rule_and_cap(void **state)
{
    (void)state;
    struct tn_fence_mem *f = tn_fence_mem_new(100);
    assert_non_null(f);
    uint64_t before = 9;
    assert_int_equal(tn_fence_mem_advance(f, "x", 1, 5, &before), 0);
    assert_int_equal(before, 0);
    assert_int_equal(tn_fence_mem_advance(f, "x", 1, 5, &before), 0);
    assert_int_equal(tn_fence_mem_advance(f, "x", 1, 4, &before), TN_ESTALE);
    assert_int_equal(before, 5);
    /* Many resources force the table to grow; marks survive the rehash. */
    for (int i = 0; i < 99; i++) {
        char name[16];
        int n = snprintf(name, sizeof(name), "r%d", i);
        assert_int_equal(
            tn_fence_mem_advance(f, name, (size_t)n, (uint64_t)i + 1, NULL), 0);
    }
    assert_int_equal(tn_fence_mem_count(f), 100);
    assert_int_equal(tn_fence_mem_advance(f, "one-more", 8, 1, NULL),
                     TN_ETOOBIG);
    uint64_t hwm = 0;
    assert_int_equal(tn_fence_mem_get(f, "r42", 3, &hwm), 0);
    assert_int_equal(hwm, 43);
    assert_int_equal(tn_fence_mem_get(f, "x", 1, &hwm), 0);
    assert_int_equal(hwm, 5);
    assert_int_equal(tn_fence_mem_get(f, "zz", 2, &hwm), TN_ENOTFOUND);
    assert_int_equal(tn_fence_mem_advance(f, "r1", 2, 1, NULL), TN_ESTALE);
    tn_fence_mem_free(f);
    tn_fence_mem_free(NULL);
}

/* Seeded random walk: the in-memory filter and the SQLite fence make the
 * same decision for every write, and no mark ever moves down. */
static void test_fence__mem_and_sqlite_agree(void **state)
{
    (void)state;
    uint64_t seed = 0x7e5e7e5eull;
    uint64_t x = seed;
    struct tn_fence_mem *f = tn_fence_mem_new(16);
    sqlite3 *db = open_db(":memory:");
    uint64_t marks[8] = {0};
    exec_ok(db, "BEGIN");
    for (int i = 0; i < 5000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        char name[8];
        int n = snprintf(name, sizeof(name), "r%u", (unsigned)(x % 8));
        uint64_t token = (x >> 8) % 64 + (uint64_t)i / 100;
        int a = tn_fence_mem_advance(f, name, (size_t)n, token, NULL);
        int b = tn_fence_sqlite_advance(db, name, (size_t)n, token, NULL, NULL);
        if (a != b)
            fail_msg("seed %llu step %d: mem %d sqlite %d",
                     (unsigned long long)seed, i, a, b);
        uint64_t *m = &marks[x % 8];
        assert_int_equal(a, token >= *m ? 0 : TN_ESTALE);
        if (a == 0)
            *m = token;
        uint64_t hwm = 0;
        assert_int_equal(tn_fence_mem_get(f, name, (size_t)n, &hwm), 0);
        assert_true(hwm == *m);
    }
    exec_ok(db, "COMMIT");
    sqlite3_close(db);
    tn_fence_mem_free(f);
}

/* ---- proofs ---------------------------------------------------------- */

static void test_fence__proof_sign_verify(void **state)
{
    (void)state;
    uint8_t pk[32];
    uint8_t sk[64];
    uint8_t pk2[32];
    uint8_t sk2[64];
    assert_int_equal(tn_proof_keypair(pk, sk), 0);
    assert_int_equal(tn_proof_keypair(pk2, sk2), 0);
    char hex[129];
    assert_int_equal(tn_proof_sign(sk, "shard:8841", 10, 403, hex), 0);
    assert_int_equal(strlen(hex), TN_PROOF_HEX_LEN);
    assert_int_equal(tn_proof_verify(pk, "shard:8841", 10, 403, hex, 128), 0);
    /* Wrong token, name, key, or a tampered or missing signature fail. */
    assert_int_equal(tn_proof_verify(pk, "shard:8841", 10, 404, hex, 128),
                     TN_ESIGNATURE);
    assert_int_equal(tn_proof_verify(pk, "shard:8842", 10, 403, hex, 128),
                     TN_ESIGNATURE);
    assert_int_equal(tn_proof_verify(pk2, "shard:8841", 10, 403, hex, 128),
                     TN_ESIGNATURE);
    hex[5] = hex[5] == '0' ? '1' : '0';
    assert_int_equal(tn_proof_verify(pk, "shard:8841", 10, 403, hex, 128),
                     TN_ESIGNATURE);
    assert_int_equal(tn_proof_verify(pk, "shard:8841", 10, 403, NULL, 0),
                     TN_ESIGNATURE);
    assert_int_equal(tn_proof_verify(pk, "shard:8841", 10, 403, "zz", 2),
                     TN_ESIGNATURE);
    /* (name "a1", token 2) and (name "a", token 12) sign different bytes. */
    assert_int_equal(tn_proof_sign(sk, "a", 1, 12, hex), 0);
    assert_int_equal(tn_proof_verify(pk, "a1", 2, 2, hex, 128), TN_ESIGNATURE);
    assert_int_equal(tn_proof_sign(sk, "", 0, 1, hex), TN_EINVAL);
    assert_int_equal(tn_proof_sign(sk, "a", 1, TN_FENCE_TOKEN_MAX + 1, hex),
                     TN_EINVAL);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    (void)fputs(text, f);
    (void)fclose(f);
}

static void test_fence__key_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/tn-fence-keys-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char skp[128];
    char pkp[128];
    (void)snprintf(skp, sizeof(skp), "%s/signing.key", dir);
    (void)snprintf(pkp, sizeof(pkp), "%s/verify.key", dir);
    uint8_t pk[32];
    uint8_t sk[64];
    assert_int_equal(tn_proof_keypair(pk, sk), 0);
    assert_int_equal(tn_proof_write_keys(skp, pkp, pk, sk, NULL), 0);
    struct stat st;
    assert_int_equal(stat(skp, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    /* Never overwrites. */
    assert_int_equal(tn_proof_write_keys(skp, pkp, pk, sk, NULL), TN_EIO);
    uint8_t sk2[64];
    uint8_t pk2[32];
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_proof_load_signing_key(skp, sk2, &em), 0);
    assert_int_equal(tn_proof_load_verify_key(pkp, pk2, &em), 0);
    assert_memory_equal(sk, sk2, 64);
    assert_memory_equal(pk, pk2, 32);
    char hex[129];
    assert_int_equal(tn_proof_sign(sk2, "k", 1, 1, hex), 0);
    assert_int_equal(tn_proof_verify(pk2, "k", 1, 1, hex, 128), 0);
    /* Wrong formats are TN_EINVAL; missing files TN_EIO. */
    assert_int_equal(tn_proof_load_signing_key(pkp, sk2, &em), TN_EINVAL);
    assert_int_equal(tn_proof_load_verify_key(skp, pk2, &em), TN_EINVAL);
    write_file(pkp, "not hex at all\n");
    assert_int_equal(tn_proof_load_verify_key(pkp, pk2, &em), TN_EINVAL);
    assert_int_equal(tn_proof_load_verify_key("/nonexistent/x", pk2, &em),
                     TN_EIO);
    /* A signing key whose public half does not match its seed. */
    char bad[130];
    sk[40] ^= 1;
    for (int i = 0; i < 64; i++)
        (void)snprintf(bad + 2 * i, 3, "%02x", sk[i]);
    write_file(skp, bad);
    assert_int_equal(tn_proof_load_signing_key(skp, sk2, &em), TN_EINVAL);
    unlink(skp);
    unlink(pkp);
    rmdir(dir);
}

/* ---- record check ---------------------------------------------------- */

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

static void test_fence__record_check_reasons(void **state)
{
    (void)state;
    uint64_t tok = 0;
    bool claim = true;
    struct tn_fence_record r = rec("shard:8841", "403");
    assert_int_equal(tn_fence_record_check(&r, NULL, &tok, &claim),
                     TN_FENCE_OK);
    assert_int_equal(tok, 403);
    assert_false(claim);
    r = rec(NULL, "1");
    assert_int_equal(tn_fence_record_check(&r, NULL, &tok, &claim),
                     TN_FENCE_NO_KEY);
    r = rec("a\x01", "1");
    assert_int_equal(tn_fence_record_check(&r, NULL, &tok, &claim),
                     TN_FENCE_BAD_KEY);
    r = rec("a", NULL);
    assert_int_equal(tn_fence_record_check(&r, NULL, &tok, &claim),
                     TN_FENCE_NO_TOKEN);
    r = rec("a", "-3");
    assert_int_equal(tn_fence_record_check(&r, NULL, &tok, &claim),
                     TN_FENCE_BAD_TOKEN);
    r = rec("a", "3");
    r.token_count = 2;
    assert_int_equal(tn_fence_record_check(&r, NULL, &tok, &claim),
                     TN_FENCE_BAD_TOKEN);
    r = rec("a", "3");
    r.claim = "yes";
    r.claim_len = 3;
    assert_int_equal(tn_fence_record_check(&r, NULL, &tok, &claim),
                     TN_FENCE_BAD_CLAIM);
    r.claim = "1";
    r.claim_len = 1;
    assert_int_equal(tn_fence_record_check(&r, NULL, &tok, &claim),
                     TN_FENCE_OK);
    assert_true(claim);
    assert_string_equal(tn_fence_reason_name(TN_FENCE_STALE), "stale");
    assert_string_equal(tn_fence_reason_name(TN_FENCE_NO_TOKEN), "no_token");
}

static void test_fence__record_check_proofs(void **state)
{
    (void)state;
    uint8_t pk[32];
    uint8_t sk[64];
    assert_int_equal(tn_proof_keypair(pk, sk), 0);
    char hex[129];
    assert_int_equal(tn_proof_sign(sk, "shard:8841", 10, 403, hex), 0);
    uint64_t tok = 0;
    bool claim = false;
    struct tn_fence_record r = rec("shard:8841", "403");
    /* Without a key to verify with, proofs are not required. */
    assert_int_equal(tn_fence_record_check(&r, NULL, &tok, &claim),
                     TN_FENCE_OK);
    assert_int_equal(tn_fence_record_check(&r, pk, &tok, &claim),
                     TN_FENCE_BAD_PROOF);
    r.proof = hex;
    r.proof_len = 128;
    r.proof_count = 1;
    assert_int_equal(tn_fence_record_check(&r, pk, &tok, &claim), TN_FENCE_OK);
    /* A forged huge token with a proof for another token fails. */
    r.token = "9007199254740992";
    r.token_len = strlen(r.token);
    assert_int_equal(tn_fence_record_check(&r, pk, &tok, &claim),
                     TN_FENCE_BAD_PROOF);
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

static void test_fence__txn_id(void **state)
{
    (void)state;
    char buf[300];
    assert_int_equal(tn_fence_txn_id("shard:8841", 10, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "tenure-lease:shard:8841");
    assert_int_equal(tn_fence_txn_id("shard:8841", 10, buf, 10), TN_ETOOBIG);
    assert_int_equal(tn_fence_txn_id("", 0, buf, sizeof(buf)), TN_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fence__parse_token_accepts_plain_decimal),
        cmocka_unit_test(test_fence__parse_token_rejects_junk),
        cmocka_unit_test(test_fence__format_token_round_trips),
        cmocka_unit_test(test_fence__name_validation),
        cmocka_unit_test(test_fence__sqlite_memory_rule),
        cmocka_unit_test(test_fence__sqlite_requires_transaction),
        cmocka_unit_test(test_fence__sqlite_rollback_undoes_mark),
        cmocka_unit_test(test_fence__sqlite_file_persists_mark),
        cmocka_unit_test(test_fence__mem_rule_and_cap),
        cmocka_unit_test(test_fence__mem_and_sqlite_agree),
        cmocka_unit_test(test_fence__proof_sign_verify),
        cmocka_unit_test(test_fence__key_files),
        cmocka_unit_test(test_fence__record_check_reasons),
        cmocka_unit_test(test_fence__record_check_proofs),
        cmocka_unit_test(test_fence__txn_id),
        cmocka_unit_test(
            test_fence__batch_decides_in_memory_flushes_final_mark),
        cmocka_unit_test(test_fence__batch_begin_forgets_marks),
        cmocka_unit_test(test_fence__batch_agrees_with_sqlite),
        cmocka_unit_test(test_fence__sqlite_prepared_agrees),
        cmocka_unit_test(test_fence__proof_cache_verifies_once),
        cmocka_unit_test(test_fence__record_check_cached_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
