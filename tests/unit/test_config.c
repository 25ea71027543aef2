/* SPDX-License-Identifier: MIT */
/* tenured's option table (src/server/config.c): every integer option
 * takes exactly its documented bounds and refuses one past either end and
 * anything that is not a whole decimal number; every option of --help is
 * covered here (a new option without a case fails); flags win over the
 * environment, which wins over --config FILE; usage errors are refused with
 * a message naming what is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tenure/err.h>

#include "server/config.h"
#include "tn_test.h"

#include <cmocka.h>

extern char **environ;

#define F(f) offsetof(struct tn_config, f)

/* The integer options and their bounds, as documented in docs/CONFIG.md. */
static const struct {
    const char *name;
    size_t off;
    long long min, max, def;
} ints[] = {
    {"min-ttl-ms", F(min_ttl_ms), 1, 86400000, 100},
    {"max-ttl-ms", F(max_ttl_ms), 1, 604800000, 3600000},
    {"max-body-bytes", F(max_body_bytes), 256, 1048576, 4096},
    {"max-header-bytes", F(max_header_bytes), 1024, 65536, 8192},
    {"max-connections", F(max_connections), 1, 60000, 1000},
    {"reserved-connections", F(reserved_connections), 0, 60000, 100},
    {"request-timeout-ms", F(request_timeout_ms), 100, 3600000, 30000},
    {"drain-timeout-ms", F(drain_timeout_ms), 0, 600000, 10000},
    {"expected-leases", F(expected_leases), 1, 100000000, 1024},
    {"journal-bytes", F(journal_bytes), 65536, 1073741824, 4194304},
    {"max-wait-ms", F(max_wait_ms), 0, 3600000, 300000},
    {"max-waiters", F(max_waiters), 0, 1000000, 10000},
    {"max-waiters-per-name", F(max_waiters_per_name), 0, 1000000, 1000},
    {"max-waiters-per-address", F(max_waiters_per_address), 0, 1000000, 256},
    {"max-waiters-per-principal", F(max_waiters_per_principal), 0, 1000000,
     256},
    {"max-leases", F(max_leases), 0, 100000000, 500000},
    {"max-names", F(max_names), 0, 100000000, 500000},
    {"retain-ms", F(retain_ms), 0, 31536000000, 86400000},
    {"max-sessions", F(max_sessions), 0, 100000000, 100000},
    {"max-batch-names", F(max_batch_names), 1, 100000, 1024},
    {"max-batch-body-bytes", F(max_batch_body_bytes), 256, 16777216, 65536},
    {"event-backlog", F(event_backlog), 1, 10000000, 4096},
    {"event-buffer-bytes", F(event_buffer_bytes), 1024, 1073741824, 1048576},
    {"event-buffer-total-bytes", F(event_buffer_total_bytes), 65536,
     68719476736, 67108864},
    {"reply-buffer-total-bytes", F(reply_buffer_total_bytes), 65536,
     68719476736, 268435456},
    {"max-pipeline", F(max_pipeline), 1, 1024, 16},
    {"event-heartbeat-ms", F(event_heartbeat_ms), 10, 3600000, 15000},
    {"max-subscribers", F(max_subscribers), 0, 100000, 256},
    {"publish-backlog", F(publish_backlog), 1, 100000000, 100000},
    {"publish-maxlen", F(publish_maxlen), 0, 1000000000000, 1000000},
};

/* The text options: name, field, size, default (the last two are choices,
 * whose values are checked in test_config__usage_errors). */
static const struct {
    const char *name;
    size_t off, size;
    const char *def;
} strs[] = {
    {"listen", F(listen), 256, "127.0.0.1:7300"},
    {"data-dir", F(data_dir), 1024, "./tenure-data"},
    {"store", F(store), 1024, ""},
    {"signing-key", F(signing_key), 1024, ""},
    {"auth-file", F(auth_file), 1024, ""},
    {"tls-cert", F(tls_cert), 1024, ""},
    {"tls-key", F(tls_key), 1024, ""},
    {"tls-client-ca", F(tls_client_ca), 1024, ""},
    {"log-level", F(log_level), 16, "info"},
    {"commit", F(commit), 16, "inline"},
};

static const char *const others[] = {"insecure-no-auth", "publish",
                                     "publish-opt",      "require-sync-standby",
                                     "allow-host",       "allow-origin"};

/* No TENURE_* variable of the caller's environment leaks into a case. */
static int clean_env(void **state)
{
    (void)state;
    for (;;) {
        char name[256] = "";
        for (char **e = environ; *e != NULL; e++) {
            if (strncmp(*e, "TENURE_", 7) == 0) {
                size_t n = strcspn(*e, "=");
                snprintf(name, sizeof(name), "%.*s", (int)n, *e);
                break;
            }
        }
        if (name[0] == '\0')
            return 0;
        unsetenv(name);
    }
}

/* Parse the flags given (NULL-terminated), as tenured's argv[1..]. */
static int parse(struct tn_config *c, struct tn_errmsg *em, ...)
{
    static char store[15][2048];
    char *argv[16] = {store[0]};
    int argc = 1;
    snprintf(store[0], sizeof(store[0]), "tenured");
    va_list ap;
    va_start(ap, em);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && argc < 15;) {
        snprintf(store[argc], sizeof(store[argc]), "%s", a);
        argv[argc] = store[argc];
        argc++;
    }
    va_end(ap);
    enum tn_config_action action = TN_CONFIG_EXIT_OK;
    memset(em, 0, sizeof(*em));
    int rc = tn_config_parse(c, argc, argv, &action, em);
    if (rc == 0)
        assert_int_equal(action, TN_CONFIG_RUN);
    return rc;
}

static int64_t int_at(const struct tn_config *c, size_t off)
{
    int64_t v;
    memcpy(&v, (const char *)c + off, sizeof(v));
    return v;
}

static void test_config__defaults(void **state)
{
    (void)state;
    struct tn_config c;
    struct tn_errmsg em;
    assert_int_equal(parse(&c, &em, NULL), TN_OK);
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
        assert_int_equal(int_at(&c, ints[i].off), ints[i].def);
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        assert_string_equal((const char *)&c + strs[i].off, strs[i].def);
    assert_false(c.insecure_no_auth);
    assert_string_equal(c.publish, "");
    assert_string_equal(c.publish_opt, "");
    assert_string_equal(c.allow_host, "");
    assert_string_equal(c.allow_origin, "");
}

/* min and max are taken, one past either end is refused. */
static void test_config__integer_bounds(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        struct tn_config c;
        struct tn_errmsg em;
        char arg[128], want[128];
        /* min-ttl-ms may not go above max-ttl-ms: move the other one */
        const char *other = "--drain-timeout-ms=1";
        if (strcmp(ints[i].name, "min-ttl-ms") == 0)
            other = "--max-ttl-ms=604800000";
        else if (strcmp(ints[i].name, "max-ttl-ms") == 0)
            other = "--min-ttl-ms=1";
        snprintf(arg, sizeof(arg), "--%s=%lld", ints[i].name, ints[i].min);
        assert_int_equal(parse(&c, &em, other, arg, NULL), TN_OK);
        assert_int_equal(int_at(&c, ints[i].off), ints[i].min);
        snprintf(arg, sizeof(arg), "--%s=%lld", ints[i].name, ints[i].max);
        assert_int_equal(parse(&c, &em, other, arg, NULL), TN_OK);
        assert_int_equal(int_at(&c, ints[i].off), ints[i].max);
        snprintf(arg, sizeof(arg), "--%s=%lld", ints[i].name, ints[i].min - 1);
        assert_int_equal(parse(&c, &em, arg, NULL), TN_EINVAL);
        snprintf(want, sizeof(want),
                 "--%s: expected an integer in [%lld, %lld], got '%lld'",
                 ints[i].name, ints[i].min, ints[i].max, ints[i].min - 1);
        assert_string_equal(em.text, want);
        snprintf(arg, sizeof(arg), "--%s=%lld", ints[i].name, ints[i].max + 1);
        assert_int_equal(parse(&c, &em, arg, NULL), TN_EINVAL);
        snprintf(want, sizeof(want),
                 "--%s: expected an integer in [%lld, %lld], got '%lld'",
                 ints[i].name, ints[i].min, ints[i].max, ints[i].max + 1);
        assert_string_equal(em.text, want);
        /* the value as a separate argument is the same option */
        snprintf(arg, sizeof(arg), "--%s", ints[i].name);
        assert_int_equal(parse(&c, &em, arg, "99999999999999999999", NULL),
                         TN_EINVAL);
        snprintf(want, sizeof(want),
                 "--%s: expected an integer in [%lld, %lld], got "
                 "'99999999999999999999'",
                 ints[i].name, ints[i].min, ints[i].max);
        assert_string_equal(em.text, want);
    }
}

static void test_config__integer_syntax(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "--max-pipeline=",    "--max-pipeline=12x",  "--max-pipeline=x12",
        "--max-pipeline=1.5", "--max-pipeline=0x10",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tn_config c;
        struct tn_errmsg em;
        assert_int_equal(parse(&c, &em, bad[i], NULL), TN_EINVAL);
        assert_non_null(strstr(em.text, "max-pipeline"));
    }
    struct tn_config c;
    struct tn_errmsg em;
    assert_int_equal(parse(&c, &em, "--max-pipeline", "+7", NULL), TN_OK);
    assert_int_equal(c.max_pipeline, 7);
}

static void test_config__strings_and_lists(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]) - 2; i++) {
        struct tn_config c;
        struct tn_errmsg em;
        char arg[2048];
        size_t n = strs[i].size - 1; /* the longest that fits */
        int k = snprintf(arg, sizeof(arg), "--%s=", strs[i].name);
        if (strcmp(strs[i].name, "listen") == 0) {
            memset(arg + k, 'h', n - 5);
            memcpy(arg + k + n - 5, ":7300", 6);
        } else {
            memset(arg + k, 'v', n);
            arg[(size_t)k + n] = '\0';
        }
        assert_int_equal(parse(&c, &em, arg, NULL), TN_OK);
        assert_int_equal(strlen((const char *)&c + strs[i].off), n);
        arg[(size_t)k + n] = 'v'; /* one more */
        arg[(size_t)k + n + 1] = '\0';
        if (strcmp(strs[i].name, "listen") == 0)
            memcpy(arg + k + n - 4, ":7300", 6);
        assert_int_equal(parse(&c, &em, arg, NULL), TN_EINVAL);
        assert_non_null(strstr(em.text, ": too long (at most"));
    }
    struct tn_config c;
    struct tn_errmsg em;
    assert_int_equal(parse(&c, &em, "--publish=redis://a/s", "--publish",
                           "kafka://b/t", "--publish-opt", "k=v", NULL),
                     TN_OK);
    assert_string_equal(c.publish, "redis://a/s\nkafka://b/t\n");
    assert_string_equal(c.publish_opt, "k=v\n");
    /* an empty value clears the list */
    assert_int_equal(parse(&c, &em, "--publish=redis://a/s",
                           "--publish=", "--publish=kafka://b/t", NULL),
                     TN_OK);
    assert_string_equal(c.publish, "kafka://b/t\n");
    /* Names and origins: repeatable, each value kept whole (a comma list
     * is split where it is read, src/http/origin.c). */
    assert_int_equal(parse(&c, &em, "--allow-host", "a.example,b.example",
                           "--allow-host=c.example", "--allow-origin",
                           "https://app.example", NULL),
                     TN_OK);
    assert_string_equal(c.allow_host, "a.example,b.example\nc.example\n");
    assert_string_equal(c.allow_origin, "https://app.example\n");
}

static void test_config__bool(void **state)
{
    (void)state;
    struct tn_config c;
    struct tn_errmsg em;
    assert_int_equal(parse(&c, &em, "--insecure-no-auth", NULL), TN_OK);
    assert_true(c.insecure_no_auth);
    assert_int_equal(parse(&c, &em, "--insecure-no-auth=0", NULL), TN_OK);
    assert_false(c.insecure_no_auth);
    assert_int_equal(parse(&c, &em, "--insecure-no-auth=1", NULL), TN_OK);
    assert_true(c.insecure_no_auth);
    assert_int_equal(parse(&c, &em, "--insecure-no-auth=yes", NULL), TN_EINVAL);
    assert_string_equal(
        em.text, "--insecure-no-auth: expected true or false, got 'yes'");
    /* --require-sync-standby is off by default and needs the PostgreSQL
     * store: the embedded store has no standby to require. */
    assert_int_equal(parse(&c, &em, NULL), TN_OK);
    assert_false(c.require_sync_standby);
    assert_int_equal(parse(&c, &em, "--require-sync-standby", NULL), TN_EINVAL);
    assert_string_equal(em.text,
                        "--require-sync-standby: needs --store postgresql://");
    assert_int_equal(parse(&c, &em, "--require-sync-standby",
                           "--store=postgresql://db/tenure", NULL),
                     TN_OK);
    assert_true(c.require_sync_standby);
}

static void test_config__usage_errors(void **state)
{
    (void)state;
    struct tn_config c;
    struct tn_errmsg em;
    assert_int_equal(parse(&c, &em, "serve", NULL), TN_EINVAL);
    assert_string_equal(em.text, "unexpected argument 'serve'");
    assert_int_equal(parse(&c, &em, "--no-such-thing=1", NULL), TN_EINVAL);
    assert_string_equal(em.text, "--no-such-thing: unknown option");
    /* no abbreviation: a prefix of one option is no option */
    assert_int_equal(parse(&c, &em, "--max-ttl", "5", NULL), TN_EINVAL);
    assert_string_equal(em.text, "--max-ttl: unknown option");
    assert_int_equal(parse(&c, &em, "--max-pipeline", NULL), TN_EINVAL);
    assert_string_equal(em.text, "--max-pipeline: needs a value");
    assert_int_equal(
        parse(&c, &em, "--min-ttl-ms=5000", "--max-ttl-ms=4000", NULL),
        TN_EINVAL);
    assert_string_equal(em.text, "--min-ttl-ms: above --max-ttl-ms");
    /* a choice takes one of its values only */
    assert_int_equal(parse(&c, &em, "--commit=fast", NULL), TN_EINVAL);
    assert_string_equal(em.text, "--commit: expected inline or thread, got "
                                 "'fast'");
    assert_int_equal(parse(&c, &em, "--log-level", "loud", NULL), TN_EINVAL);
    assert_string_equal(em.text, "--log-level: expected debug, info, warn or "
                                 "error, got 'loud'");
    assert_int_equal(parse(&c, &em, "--commit", "thread", NULL), TN_OK);
    assert_string_equal(c.commit, "thread");
    static const char *const listen[] = {
        "--listen=7300",     "--listen=:7300",    "--listen=h:",
        "--listen=h:65536",  "--listen=h:http",   "--listen=h:123456",
        "--listen=h:-1",     "--listen=::1:7300", "--listen=[::1:7300",
        "--listen=[h]:7300",
    };
    for (size_t i = 0; i < sizeof(listen) / sizeof(listen[0]); i++) {
        assert_int_equal(parse(&c, &em, listen[i], NULL), TN_EINVAL);
        assert_non_null(strstr(em.text, "--listen: expected host:port"));
    }
    assert_int_equal(parse(&c, &em, "--listen=[::1]:0", NULL), TN_OK);
    assert_int_equal(parse(&c, &em, "--listen=[::]:7300", NULL), TN_OK);
    assert_int_equal(parse(&c, &em, "--listen=h:65535", NULL), TN_OK);
}

static void test_config__help_and_version_exit(void **state)
{
    (void)state;
    static const char *const flags[] = {"--help", "-h", "--version",
                                        "--config-markdown"};
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        struct tn_config c;
        struct tn_errmsg em = {{0}};
        enum tn_config_action action = TN_CONFIG_RUN;
        char a0[] = "tenured", a2[] = "--bogus", a1[32];
        snprintf(a1, sizeof(a1), "%s", flags[i]);
        char *argv[] = {a0, a1, a2, NULL};
        (void)fflush(stdout);
        FILE *keep = stdout;
        stdout = fopen("/dev/null", "w");
        assert_non_null(stdout);
        int rc = tn_config_parse(&c, 3, argv, &action, &em);
        (void)fclose(stdout);
        stdout = keep;
        assert_int_equal(rc, TN_OK);
        assert_int_equal(action, TN_CONFIG_EXIT_OK);
    }
}

/* The file is read first, the environment overrides it, flags win. */
static void test_config__file_env_flag_order(void **state)
{
    (void)state;
    char path[] = "/tmp/tn-test-config-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    (void)fprintf(f, "# a comment\n\n  max-pipeline = 3  \n"
                     "max-subscribers=4\nmax-waiters = 5\r\n");
    (void)fclose(f);
    struct tn_config c;
    struct tn_errmsg em;
    char cfg[64];
    snprintf(cfg, sizeof(cfg), "--config=%s", path);
    setenv("TENURE_MAX_SUBSCRIBERS", "40", 1);
    setenv("TENURE_MAX_WAITERS", "50", 1);
    assert_int_equal(parse(&c, &em, cfg, "--max-waiters=500", NULL), TN_OK);
    assert_int_equal(c.max_pipeline, 3);
    assert_int_equal(c.max_subscribers, 40);
    assert_int_equal(c.max_waiters, 500);
    /* TENURE_CONFIG names the file too */
    setenv("TENURE_CONFIG", path, 1);
    assert_int_equal(parse(&c, &em, NULL), TN_OK);
    assert_int_equal(c.max_pipeline, 3);
    unsetenv("TENURE_CONFIG");
    /* a bad value in the environment is refused like a flag */
    setenv("TENURE_MAX_WAITERS", "-1", 1);
    assert_int_equal(parse(&c, &em, NULL), TN_EINVAL);
    assert_string_equal(em.text, "TENURE_MAX_WAITERS: expected an integer in "
                                 "[0, 1000000], got '-1'");
    unsetenv("TENURE_MAX_WAITERS");
    unsetenv("TENURE_MAX_SUBSCRIBERS");

    f = fopen(path, "w");
    assert_non_null(f);
    (void)fprintf(f, "max-pipeline = 3\nmax-pipeline 4\n");
    (void)fclose(f);
    assert_int_equal(parse(&c, &em, cfg, NULL), TN_EINVAL);
    char want[128];
    snprintf(want, sizeof(want), "%s:2: expected \"name = value\"", path);
    assert_string_equal(em.text, want);
    f = fopen(path, "w");
    assert_non_null(f);
    (void)fprintf(f, "config = /etc/other\n");
    (void)fclose(f);
    assert_int_equal(parse(&c, &em, cfg, NULL), TN_EINVAL);
    assert_non_null(strstr(em.text, ":1: config: unknown option"));
    f = fopen(path, "w");
    assert_non_null(f);
    (void)fprintf(f, "max-pipeline = 2000\n");
    (void)fclose(f);
    assert_int_equal(parse(&c, &em, cfg, NULL), TN_EINVAL);
    snprintf(want, sizeof(want),
             "%s:1: max-pipeline: expected an integer in [1, 1024], got "
             "'2000'",
             path);
    assert_string_equal(em.text, want);
    unlink(path);
    assert_int_equal(parse(&c, &em, cfg, NULL), TN_EINVAL);
    assert_non_null(strstr(em.text, "cannot read config file"));
}

/* Every option the table documents has a case above. */
static void test_config__every_option_is_covered(void **state)
{
    (void)state;
    char *md = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&md, &len);
    assert_non_null(f);
    tn_config_print_markdown(f);
    (void)fclose(f);
    size_t seen = 0;
    for (const char *p = md; (p = strstr(p, "| `--")) != NULL; p++) {
        char name[64];
        assert_int_equal(sscanf(p + 5, "%63[a-z-]", name), 1);
        bool found = false;
        for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
            found = found || strcmp(ints[i].name, name) == 0;
        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
            found = found || strcmp(strs[i].name, name) == 0;
        for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
            found = found || strcmp(others[i], name) == 0;
        if (!found)
            fail_msg("option --%s has no case in test_config.c", name);
        seen++;
    }
    free(md);
    assert_int_equal(seen, sizeof(ints) / sizeof(ints[0]) +
                               sizeof(strs) / sizeof(strs[0]) +
                               sizeof(others) / sizeof(others[0]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_config__defaults, clean_env),
        cmocka_unit_test_setup(test_config__integer_bounds, clean_env),
        cmocka_unit_test_setup(test_config__integer_syntax, clean_env),
        cmocka_unit_test_setup(test_config__strings_and_lists, clean_env),
        cmocka_unit_test_setup(test_config__bool, clean_env),
        cmocka_unit_test_setup(test_config__usage_errors, clean_env),
        cmocka_unit_test_setup(test_config__help_and_version_exit, clean_env),
        cmocka_unit_test_setup(test_config__file_env_flag_order, clean_env),
        cmocka_unit_test_setup(test_config__every_option_is_covered, clean_env),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
