/* SPDX-License-Identifier: MIT */
/* common/url, redis_url and kafka_url: host:port (IPv4, IPv6 in brackets,
 * names, ports, defaults, the listener's port 0), URLs (userinfo up to
 * the last '@', path, query, broker lists), percent-decoding, and the
 * Redis and Kafka stream URLs the publisher and the followers share;
 * garbage of each kind is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tenure/err.h>

#include "common/kafka_url.h"
#include "common/redis_url.h"
#include "common/url.h"
#include "tn_test.h"

#include <cmocka.h>

static int hostport(const char *s, unsigned flags, struct tn_hostport *hp)
{
    return tn_url_parse_hostport(s, strlen(s), 4242, flags, hp);
}

static void assert_span(const char *p, size_t n, const char *want)
{
    assert_non_null(p);
    assert_int_equal(n, strlen(want));
    assert_memory_equal(p, want, n);
}

static void test_url__hostport_ipv4_names_and_ports(void **state)
{
    (void)state;
    struct tn_hostport hp;
    assert_int_equal(hostport("127.0.0.1:7300", 0, &hp), TN_OK);
    assert_span(hp.host, hp.host_len, "127.0.0.1");
    assert_int_equal(hp.port, 7300);
    assert_true(hp.has_port);
    assert_false(hp.bracketed);
    assert_int_equal(hostport("db-1.example_x.org:1", 0, &hp), TN_OK);
    assert_span(hp.host, hp.host_len, "db-1.example_x.org");
    assert_int_equal(hp.port, 1);
    assert_int_equal(hostport("localhost:65535", 0, &hp), TN_OK);
    assert_int_equal(hp.port, 65535);
    assert_int_equal(hostport("h:07300", 0, &hp), TN_OK);
    assert_int_equal(hp.port, 7300);
}

static void test_url__hostport_ipv6_in_brackets(void **state)
{
    (void)state;
    struct tn_hostport hp;
    assert_int_equal(hostport("[::1]:7300", 0, &hp), TN_OK);
    assert_span(hp.host, hp.host_len, "::1");
    assert_true(hp.bracketed);
    assert_int_equal(hp.port, 7300);
    assert_int_equal(hostport("[2001:db8::7]", 0, &hp), TN_OK);
    assert_span(hp.host, hp.host_len, "2001:db8::7");
    assert_int_equal(hp.port, 4242);
    assert_false(hp.has_port);
    assert_int_equal(hostport("[fe80::1%eth0]:80", 0, &hp), TN_OK);
    assert_span(hp.host, hp.host_len, "fe80::1%eth0");
    assert_int_equal(hostport("[::ffff:127.0.0.1]:9", 0, &hp), TN_OK);
    /* Without brackets an IPv6 address is ambiguous: refused. */
    assert_int_equal(hostport("::1:7300", 0, &hp), TN_EINVAL);
    assert_int_equal(hostport("::1", 0, &hp), TN_EINVAL);
    assert_int_equal(hostport("[::1", 0, &hp), TN_EINVAL);
    assert_int_equal(hostport("[]:80", 0, &hp), TN_EINVAL);
    assert_int_equal(hostport("[example.org]:80", 0, &hp), TN_EINVAL);
    assert_int_equal(hostport("[::1]7300", 0, &hp), TN_EINVAL);
    assert_int_equal(hostport("[::1]:", 0, &hp), TN_EINVAL);
    assert_int_equal(hostport("[fe80::1%]:80", 0, &hp), TN_EINVAL);
}

static void test_url__hostport_defaults_and_flags(void **state)
{
    (void)state;
    struct tn_hostport hp;
    assert_int_equal(hostport("example.org", 0, &hp), TN_OK);
    assert_int_equal(hp.port, 4242);
    assert_false(hp.has_port);
    assert_int_equal(hostport("example.org", TN_URL_NEED_PORT, &hp), TN_EINVAL);
    /* Port 0 only for a listener, which then picks a free one. */
    assert_int_equal(hostport("h:0", 0, &hp), TN_EINVAL);
    assert_int_equal(hostport("h:0", TN_URL_PORT_ZERO, &hp), TN_OK);
    assert_int_equal(hp.port, 0);
    assert_true(hp.has_port);
}

static void test_url__hostport_garbage(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",         ":7300",   "h:",       "h:65536", "h:99999",
        "h:123456", "h:-1",    "h:+80",    "h: 80",   "h:http",
        "h:80x",    "h:80:81", "h o:80",   "h/x:80",  "u@h:80",
        "h%41:80",  "h\n:80",  "[::1]]:8", "h,i:80",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tn_hostport hp;
        if (hostport(bad[i], 0, &hp) != TN_EINVAL)
            fail_msg("\"%s\" was taken", bad[i]);
    }
    char longname[TN_URL_HOST_MAX + 2];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    struct tn_hostport hp;
    assert_int_equal(hostport(longname, 0, &hp), TN_EINVAL);
    longname[TN_URL_HOST_MAX] = '\0';
    assert_int_equal(hostport(longname, 0, &hp), TN_OK);
}

static int url(const char *s, unsigned flags, struct tn_url *u)
{
    return tn_url_parse(s, strlen(s), 80, flags, u);
}

static void test_url__parts(void **state)
{
    (void)state;
    struct tn_url u;
    assert_int_equal(url("https://[::1]:7443/base/path?a=1&b", 0, &u), TN_OK);
    assert_true(tn_url_is_scheme(&u, "https"));
    assert_false(tn_url_is_scheme(&u, "http"));
    assert_null(u.user);
    assert_null(u.password);
    assert_span(u.authority, u.authority_len, "[::1]:7443");
    assert_span(u.hp.host, u.hp.host_len, "::1");
    assert_int_equal(u.hp.port, 7443);
    assert_span(u.path, u.path_len, "/base/path");
    assert_span(u.query, u.query_len, "a=1&b");
    assert_int_equal(url("http://example.org", 0, &u), TN_OK);
    assert_int_equal(u.hp.port, 80);
    assert_null(u.path);
    assert_null(u.query);
    assert_int_equal(url("http://h?q", 0, &u), TN_OK);
    assert_null(u.path);
    assert_span(u.query, u.query_len, "q");
    assert_int_equal(url("http://h/", 0, &u), TN_OK);
    assert_span(u.path, u.path_len, "/");
}

static void test_url__userinfo_to_the_last_at(void **state)
{
    (void)state;
    struct tn_url u;
    assert_int_equal(url("redis://user:p@ss:w@h:1/s", 0, &u), TN_OK);
    assert_span(u.user, u.user_len, "user");
    assert_span(u.password, u.password_len, "p@ss:w");
    assert_span(u.hp.host, u.hp.host_len, "h");
    assert_int_equal(url("redis://secret@h/s", 0, &u), TN_OK);
    assert_span(u.user, u.user_len, "secret");
    assert_null(u.password);
    assert_int_equal(url("redis://:pw@h/s", 0, &u), TN_OK);
    assert_span(u.user, u.user_len, "");
    assert_span(u.password, u.password_len, "pw");
    /* An '@' after the host part is the path's. */
    assert_int_equal(url("redis://h/a@b", 0, &u), TN_OK);
    assert_null(u.user);
    assert_span(u.path, u.path_len, "/a@b");
}

static void test_url__host_list(void **state)
{
    (void)state;
    struct tn_url u;
    assert_int_equal(url("kafka://a:9092,[::1]:9093,c/t", 0, &u), TN_EINVAL);
    assert_int_equal(url("kafka://a:9092,[::1]:9093,c/t", TN_URL_HOST_LIST, &u),
                     TN_OK);
    assert_span(u.authority, u.authority_len, "a:9092,[::1]:9093,c");
    assert_span(u.hp.host, u.hp.host_len, "a");
    assert_int_equal(u.hp.port, 9092);
    assert_int_equal(url("kafka://a,,b/t", TN_URL_HOST_LIST, &u), TN_EINVAL);
    assert_int_equal(url("kafka://a,/t", TN_URL_HOST_LIST, &u), TN_EINVAL);
    assert_int_equal(url("kafka://a,b:x/t", TN_URL_HOST_LIST, &u), TN_EINVAL);
}

static void test_url__garbage(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",           "h:80",           "//h:80",        "http:/h",
        "http://",    "http:///p",      "http://:80",    "http://h:0",
        "http://h:x", "1http://h",      "ht tp://h",     "http://h\r\n/",
        "http://u@",  "http://u@/p",    "http://[::1/p", "http://h h/",
        "/p://h",     "http://h:99999",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tn_url u;
        if (url(bad[i], 0, &u) != TN_EINVAL)
            fail_msg("\"%s\" was taken", bad[i]);
    }
    /* The length given is the end: no reading past it. */
    struct tn_url u;
    assert_int_equal(tn_url_parse("http://h:8080", 9, 80, 0, &u), TN_EINVAL);
    assert_int_equal(tn_url_parse("http://h:8080", 10, 80, 0, &u), TN_OK);
    assert_int_equal(u.hp.port, 8);
}

static void test_url__decode(void **state)
{
    (void)state;
    char out[8];
    assert_int_equal(tn_url_decode("a%40b%2f", 8, out, sizeof(out)), TN_OK);
    assert_string_equal(out, "a@b/");
    assert_int_equal(tn_url_decode("%4", 2, out, sizeof(out)), TN_EINVAL);
    assert_int_equal(tn_url_decode("%zz", 3, out, sizeof(out)), TN_EINVAL);
    assert_int_equal(tn_url_decode("% 1", 3, out, sizeof(out)), TN_EINVAL);
    assert_int_equal(tn_url_decode("a%00", 4, out, sizeof(out)), TN_EINVAL);
    assert_int_equal(tn_url_decode("1234567", 7, out, sizeof(out)), TN_OK);
    assert_int_equal(tn_url_decode("12345678", 8, out, sizeof(out)), TN_EINVAL);
    assert_int_equal(tn_url_decode("", 0, out, sizeof(out)), TN_OK);
    assert_string_equal(out, "");
}

static void test_url__redis(void **state)
{
    (void)state;
    struct tn_redis_url r;
    assert_int_equal(tn_redis_url_parse("redis://h/s", &r), TN_OK);
    assert_string_equal(r.host, "h");
    assert_int_equal(r.port, 6379);
    assert_int_equal(r.db, -1);
    assert_string_equal(r.stream, "s");
    assert_string_equal(r.user, "");
    assert_string_equal(r.password, "");
    assert_false(r.tls.on);
    assert_int_equal(
        tn_redis_url_parse("redis://al%40x:p%40ss@[::1]:6380/12/ev%2Fx", &r),
        TN_OK);
    assert_string_equal(r.host, "::1");
    assert_int_equal(r.port, 6380);
    assert_int_equal(r.db, 12);
    assert_string_equal(r.stream, "ev/x");
    assert_string_equal(r.user, "al@x");
    assert_string_equal(r.password, "p@ss");
    /* A userinfo without ':' is the password, as Redis clients read it. */
    assert_int_equal(tn_redis_url_parse("redis://sec@h/0/s", &r), TN_OK);
    assert_string_equal(r.user, "");
    assert_string_equal(r.password, "sec");
    assert_int_equal(r.db, 0);
    assert_int_equal(tn_redis_url_parse("redis://h/100000/s", &r), TN_OK);
    assert_int_equal(r.db, 100000);
    assert_int_equal(tn_redis_url_parse("redis://h/1/a/b", &r), TN_OK);
    assert_string_equal(r.stream, "a/b");
}

static void test_url__rediss_query(void **state)
{
    (void)state;
    struct tn_redis_url r;
    assert_int_equal(
        tn_redis_url_parse(
            "rediss://h/s?tls_ca=/x/ca.pem&tls_sni=r.example&tls_verify=0", &r),
        TN_OK);
    assert_true(r.tls.on);
    assert_string_equal(r.tls.ca_file, "/x/ca.pem");
    assert_string_equal(r.tls.sni, "r.example");
    assert_true(r.tls.no_verify);
    assert_string_equal(r.stream, "s");
    assert_int_equal(tn_redis_url_parse("rediss://h/s?", &r), TN_OK);
    assert_int_equal(tn_redis_url_parse("redis://h/s?tls_ca=x", &r), TN_EINVAL);
    assert_int_equal(tn_redis_url_parse("rediss://h/s?tls_nope=x", &r),
                     TN_EINVAL);
    assert_int_equal(tn_redis_url_parse("rediss://h/s?tls_verify=2", &r),
                     TN_EINVAL);
    assert_int_equal(tn_redis_url_parse("rediss://h/s?tls_ca", &r), TN_EINVAL);
}

static void test_url__redis_garbage(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "redis://h",         "redis://h/",        "redis://h:0/s",
        "redis://h:65536/s", "redis://h:x/s",     "redis:///s",
        "redis://h/x/s",     "redis://h/-1/s",    "redis://h/100001/s",
        "redis://h//s",      "redis://h/1/",      "http://h/s",
        "redis://h/s%zz",    "redis://u:p%4@h/s", "redis://h/%00",
        "kafka://h/s",       "redis:/h/s",        "redis://h/+1/s",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tn_redis_url r;
        if (tn_redis_url_parse(bad[i], &r) != TN_EINVAL)
            fail_msg("\"%s\" was taken", bad[i]);
    }
}

static void test_url__kafka(void **state)
{
    (void)state;
    struct tn_kafka_url k;
    assert_int_equal(tn_kafka_url_parse("kafka://b1:9092,b2:9093/events", &k),
                     TN_OK);
    assert_string_equal(k.brokers, "b1:9092,b2:9093");
    assert_string_equal(k.topic, "events");
    assert_int_equal(tn_kafka_url_parse("kafka://[::1]:9092/t", &k), TN_OK);
    assert_string_equal(k.brokers, "[::1]:9092");
    static const char *const bad[] = {
        "kafka://b/",    "kafka://b",     "kafka:///t",
        "kafka://b/t/u", "kafka://b/t?x", "kafka://u@b/t",
        "redis://b/t",   "kafka://b,/t",  "kafka://b:0/t",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (tn_kafka_url_parse(bad[i], &k) != TN_EINVAL)
            fail_msg("\"%s\" was taken", bad[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url__hostport_ipv4_names_and_ports),
        cmocka_unit_test(test_url__hostport_ipv6_in_brackets),
        cmocka_unit_test(test_url__hostport_defaults_and_flags),
        cmocka_unit_test(test_url__hostport_garbage),
        cmocka_unit_test(test_url__parts),
        cmocka_unit_test(test_url__userinfo_to_the_last_at),
        cmocka_unit_test(test_url__host_list),
        cmocka_unit_test(test_url__garbage),
        cmocka_unit_test(test_url__decode),
        cmocka_unit_test(test_url__redis),
        cmocka_unit_test(test_url__rediss_query),
        cmocka_unit_test(test_url__redis_garbage),
        cmocka_unit_test(test_url__kafka),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
