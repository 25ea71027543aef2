/* SPDX-License-Identifier: MIT */
/* Fence kit unit tests: token parsing, lease names, the check-and-advance
 * rule on SQLite (:memory: and a real file) and in memory, proofs and key
 * files, and the record check the materializer relies on.  The batch fence
 * and the proof cache are in test_fence_batch.c. */
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
#include <tenure/fence_mem.h>
#include <tenure/fence_sqlite.h>

#include "tn_test.h"

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
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
