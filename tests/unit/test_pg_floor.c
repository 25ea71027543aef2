/* SPDX-License-Identifier: MIT */
/* The PostgreSQL store's token floor (src/store/pg/floor.c) on real files:
 * a token above the reservation writes a new one, the tokens under it
 * write nothing; a restart reads it back and lifts to it; a sequence below
 * a confirmed token raises the alarm, one merely below the reservation
 * does not; a file that cannot be read refuses to open; an answer whose
 * token cannot be covered on disk becomes 503; a claim's tokens count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tenure/err.h>

#include "store/pg/floor.h"
#include "tn_test.h"

#include <cmocka.h>

static char dir[64];

static int setup(void **state)
{
    (void)state;
    (void)snprintf(dir, sizeof(dir), "/tmp/tn-floor.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

static void test_pg_floor__reserves_in_blocks(void **state)
{
    (void)state;
    struct tn_pg_floor f;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_pg_floor_open(&f, dir, &em), TN_OK);
    assert_int_equal(tn_pg_floor_value(&f), 0);
    assert_int_equal(tn_pg_floor_cover(&f, 5), TN_OK);
    assert_int_equal(f.n_writes, 1);
    uint64_t reserved = f.reserved;
    assert_true(reserved >= 5 + 1000);
    for (uint64_t t = 6; t <= 500; t++)
        assert_int_equal(tn_pg_floor_cover(&f, t), TN_OK);
    assert_int_equal(f.n_writes, 1); /* all under the reservation */
    assert_int_equal(tn_pg_floor_value(&f), reserved);
    assert_int_equal(tn_pg_floor_cover(&f, reserved + 1), TN_OK);
    assert_int_equal(f.n_writes, 2);
    reserved = f.reserved;
    tn_pg_floor_close(&f);

    /* a restart lifts to the reservation read back */
    assert_int_equal(tn_pg_floor_open(&f, dir, &em), TN_OK);
    assert_int_equal(tn_pg_floor_value(&f), reserved);
    tn_pg_floor_close(&f);
}

static void test_pg_floor__alarm_only_below_confirmed(void **state)
{
    (void)state;
    struct tn_pg_floor f;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_pg_floor_open(&f, dir, &em), TN_OK);
    assert_int_equal(tn_pg_floor_cover(&f, 300), TN_OK);
    /* the sequence at 300, below the reservation: a reconnection skips
     * the rest of the block, no alarm */
    tn_pg_floor_seen(&f, 300, true);
    assert_int_equal(f.n_alarms, 0);
    assert_int_equal(f.n_raises, 1);
    /* the sequence at 120, below the 300 the database had confirmed */
    tn_pg_floor_seen(&f, 120, true);
    assert_int_equal(f.n_alarms, 1);
    assert_int_equal(f.last_forgotten, 180);
    tn_pg_floor_close(&f);
    /* after a restart, the confirmed token comes from the file */
    assert_int_equal(tn_pg_floor_open(&f, dir, &em), TN_OK);
    tn_pg_floor_seen(&f, 299, true);
    assert_int_equal(f.n_alarms, 1);
    tn_pg_floor_close(&f);
}

static void test_pg_floor__unreadable_file_refused(void **state)
{
    (void)state;
    char path[128];
    (void)snprintf(path, sizeof(path), "%s/pg-token-floor", dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    (void)fputs("tenure-token-floor 1 acked=9 reserved=3\n", fp);
    assert_int_equal(fclose(fp), 0);
    struct tn_pg_floor f;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_pg_floor_open(&f, dir, &em), TN_EINVAL);
    assert_non_null(strstr(em.text, "pg-token-floor"));
}

static void test_pg_floor__answer_503_when_not_durable(void **state)
{
    (void)state;
    struct tn_pg_floor f;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_pg_floor_open(&f, dir, &em), TN_OK);
    struct tn_store_result r = {.rc = TN_OK};
    r.lease.token = 7;
    assert_false(tn_pg_floor_guard(&f, &r));
    assert_int_equal(r.rc, TN_OK);
    /* the directory is gone: no reservation can be written */
    char cmd[128];
    (void)snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    r.lease.token = f.reserved + 1;
    assert_true(tn_pg_floor_guard(&f, &r));
    assert_int_equal(r.rc, TN_EUNAVAIL);
    assert_true(r.retry_after_ms > 0);
    tn_pg_floor_close(&f);
    assert_int_equal(mkdir(dir, 0700), 0); /* for the teardown */
}

static void test_pg_floor__claims_count(void **state)
{
    (void)state;
    struct tn_pg_floor f;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_pg_floor_open(&f, dir, &em), TN_OK);
    struct tn_claim_item items[2] = {{.token = 40}, {.token = 9000}};
    struct tn_store_result r = {.rc = TN_OK, .claims = items, .n_claims = 2};
    assert_false(tn_pg_floor_guard(&f, &r));
    assert_true(f.reserved >= 9000);
    assert_int_equal(f.acked, 9000);
    tn_pg_floor_close(&f);
}

static void test_pg_floor__off_without_data_dir(void **state)
{
    (void)state;
    struct tn_pg_floor f;
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_pg_floor_open(&f, NULL, &em), TN_OK);
    assert_int_equal(tn_pg_floor_cover(&f, 12345), TN_OK);
    assert_int_equal(tn_pg_floor_value(&f), 0);
    assert_int_equal(f.n_writes, 0);
    tn_pg_floor_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pg_floor__reserves_in_blocks,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_pg_floor__alarm_only_below_confirmed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pg_floor__unreadable_file_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_pg_floor__answer_503_when_not_durable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pg_floor__claims_count, setup,
                                        teardown),
        cmocka_unit_test(test_pg_floor__off_without_data_dir),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
