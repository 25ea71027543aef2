/* SPDX-License-Identifier: MIT */
/* common/metrics: the histogram lines, byte for byte as scrapers and the
 * integration tests read them, with and without labels and _sum. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/buf.h"
#include "common/metrics.h"
#include "tn_test.h"

#include <cmocka.h>

static void test_metrics__observe_picks_first_bound(void **state)
{
    (void)state;
    uint64_t c[4] = {0};
    const uint64_t v[] = {0, 50, 51, 100, 101, 200, 201, 100000};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        tn_metrics_hist_observe(c, 3, 50, v[i]);
    assert_int_equal(c[0], 2); /* <= 50 */
    assert_int_equal(c[1], 2); /* <= 100 */
    assert_int_equal(c[2], 2); /* <= 200 */
    assert_int_equal(c[3], 2); /* above every bound */
}

static void test_metrics__plain_histogram(void **state)
{
    (void)state;
    const uint64_t c[4] = {1, 2, 0, 3};
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    struct tn_metrics_hist h = {
        .name = "t_rows", .counts = c, .n = 3, .base = 1, .scale = 1.0};
    tn_metrics_hist_write(&b, &h);
    assert_string_equal(b.data, "t_rows_bucket{le=\"1\"} 1\n"
                                "t_rows_bucket{le=\"2\"} 3\n"
                                "t_rows_bucket{le=\"4\"} 3\n"
                                "t_rows_bucket{le=\"+Inf\"} 6\n"
                                "t_rows_count 6\n");
    tn_buf_release(&b);
}

static void test_metrics__labelled_histogram_with_sum(void **state)
{
    (void)state;
    const uint64_t c[3] = {4, 0, 1};
    const double sum = 0.25;
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    struct tn_metrics_hist h = {.name = "t_seconds",
                                .labels = "route=\"acquire\"",
                                .counts = c,
                                .n = 2,
                                .base = 50,
                                .scale = 1e-6,
                                .sum = &sum};
    tn_metrics_hist_write(&b, &h);
    assert_string_equal(b.data,
                        "t_seconds_bucket{route=\"acquire\",le=\"5e-05\"} 4\n"
                        "t_seconds_bucket{route=\"acquire\",le=\"0.0001\"} 4\n"
                        "t_seconds_bucket{route=\"acquire\",le=\"+Inf\"} 5\n"
                        "t_seconds_sum{route=\"acquire\"} 0.250000\n"
                        "t_seconds_count{route=\"acquire\"} 5\n");
    tn_buf_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics__observe_picks_first_bound),
        cmocka_unit_test(test_metrics__plain_histogram),
        cmocka_unit_test(test_metrics__labelled_histogram_with_sum),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
