/* SPDX-License-Identifier: MIT */
/* Unit tests of the CLI helpers: the server list and the mapping from
 * tn_err to the documented exit codes (durations and numbers are parsed
 * by the option parser: tests/unit/test_opt.c). */
/* clang-format off: cmocka.h needs these headers first */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tn_test.h"

#include <cmocka.h>
/* clang-format on */

#include <tenure/client.h>

#include "cli/cli.h"

static void test_cli__server_list(void **st)
{
    (void)st;
    struct tn_cli cli;
    memset(&cli, 0, sizeof(cli));
    cli.prog = "tenure";
    assert_int_equal(tn_cli_set_servers(&cli, "http://a:1,,http://b:2,"), 0);
    assert_int_equal(cli.opts.n_urls, 2);
    assert_string_equal(cli.opts.urls[0], "http://a:1");
    assert_string_equal(cli.opts.urls[1], "http://b:2");
    assert_int_equal(tn_cli_set_servers(&cli, ","), -1);
    /* host:port means http://host:port, as etcdctl takes it; https:// and
     * http:// are kept; any other scheme is refused. */
    assert_int_equal(
        tn_cli_set_servers(&cli, "localhost:7300,https://b:2,http://c:3"), 0);
    assert_int_equal(cli.opts.n_urls, 3);
    assert_string_equal(cli.opts.urls[0], "http://localhost:7300");
    assert_string_equal(cli.opts.urls[1], "https://b:2");
    assert_string_equal(cli.opts.urls[2], "http://c:3");
    assert_int_equal(tn_cli_set_servers(&cli, "ftp://a:1"), -1);
    assert_int_equal(tn_cli_set_servers(&cli, "h,h,h,h,h,h,h,h,h"), -1);
    /* Read by the one parser of addresses (common/url.h): an IPv6 address
     * in brackets, with or without a scheme; a bad port, no host, or an
     * IPv6 address without brackets is refused here, with the option's
     * name, not left to the first request. */
    assert_int_equal(
        tn_cli_set_servers(&cli, "[::1]:7300,https://[::1]:7443/t"), 0);
    assert_string_equal(cli.opts.urls[0], "http://[::1]:7300");
    assert_string_equal(cli.opts.urls[1], "https://[::1]:7443/t");
    static const char *const bad[] = {"h:99999",    "::1:7300", "http://",
                                      "http://:80", "h:0",      "a b:1",
                                      "http://h:x/"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (tn_cli_set_servers(&cli, bad[i]) != -1)
            fail_msg("--server %s was taken", bad[i]);
    }
}

static void test_cli__exit_codes(void **st)
{
    (void)st;
    assert_int_equal(tn_cli_exit_for(0), TN_CLI_OK);
    assert_int_equal(tn_cli_exit_for(TN_ECONFLICT), TN_CLI_HELD);
    assert_int_equal(tn_cli_exit_for(TN_ELOCKDELAY), TN_CLI_HELD);
    assert_int_equal(tn_cli_exit_for(TN_ELOST), TN_CLI_LOST);
    assert_int_equal(tn_cli_exit_for(TN_EEXPIRED), TN_CLI_LOST);
    assert_int_equal(tn_cli_exit_for(TN_ENOTFOUND), TN_CLI_NOTFOUND);
    assert_int_equal(tn_cli_exit_for(TN_EFORBIDDEN), TN_CLI_ERROR);
    assert_int_equal(tn_cli_exit_for(TN_ECONNECT), TN_CLI_ERROR);
    assert_int_equal(TN_CLI_USAGE, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli__server_list),
        cmocka_unit_test(test_cli__exit_codes),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
