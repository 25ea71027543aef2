/* SPDX-License-Identifier: MIT */
/* The publisher's event log (src/publish/log.c): a record parses back to
 * what was formatted, at its extremes; a torn record is "incomplete" at
 * every cut, never a different record; garbage is refused; a reader
 * crosses files, stops at the head, and says when the log no longer
 * holds the id it wants.  The Kafka value parses as JSON. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "publish/log.h"
#include "tn_test.h"

#include <cmocka.h>

static struct tn_pub_record rec(uint64_t id, enum tn_event_type t,
                                const char *name, const char *owner)
{
    struct tn_pub_record r = {.id = id,
                              .type = t,
                              .token = UINT64_MAX,
                              .floor = 7,
                              .at_ms = INT64_MAX};
    (void)snprintf(r.name, sizeof(r.name), "%s", name);
    (void)snprintf(r.owner_id, sizeof(r.owner_id), "%s", owner);
    return r;
}

static void test_publish_log__roundtrip_and_torn(void **state)
{
    (void)state;
    char name[TN_NAME_MAX_BYTES + 1], owner[TN_OWNER_MAX_BYTES + 1];
    memset(name, 'n', TN_NAME_MAX_BYTES);
    name[TN_NAME_MAX_BYTES] = '\0';
    memset(owner, ' ', TN_OWNER_MAX_BYTES); /* spaces and digits inside */
    owner[0] = '9';
    owner[TN_OWNER_MAX_BYTES] = '\0';
    struct tn_pub_record r = rec(UINT64_MAX, TN_EVENT_REVOKED, name, owner);
    char line[TN_PUB_RECORD_MAX];
    size_t n = tn_pub_log_format(&r, line);
    assert_true(n < TN_PUB_RECORD_MAX);
    struct tn_pub_record back;
    assert_int_equal(tn_pub_log_parse(line, line + n, &back), (long)n);
    assert_true(back.id == UINT64_MAX && back.token == UINT64_MAX);
    assert_true(back.at_ms == INT64_MAX && back.type == TN_EVENT_REVOKED);
    assert_string_equal(back.name, name);
    assert_string_equal(back.owner_id, owner);
    for (size_t cut = 0; cut < n; cut++)
        assert_int_equal(tn_pub_log_parse(line, line + cut, &back), 0);
    struct tn_pub_record reset = rec(3, TN_EVENT_RESET, "", "");
    n = tn_pub_log_format(&reset, line);
    assert_int_equal(tn_pub_log_parse(line, line + n, &back), (long)n);
    assert_int_equal(back.type, TN_EVENT_RESET);
    assert_string_equal(back.name, "");
}

static void test_publish_log__garbage_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "x a 1 1 1 0 1 n\n",    "1 q 1 1 1 0 1 n\n",
        "1 a 1 1 1 0 1 nX",     "1 a 1 1 1 999 1 n\n",
        "1 a 1 1 1 0 9999 n\n", "1 a1 1 1 0 1 n\n",
        "1 a 1 1 1 0 1 no\n",   "\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tn_pub_record r;
        long got = tn_pub_log_parse(bad[i], bad[i] + strlen(bad[i]), &r);
        if (got != -1)
            fail_msg("accepted or waited on \"%s\": %ld", bad[i], got);
    }
}

static void write_file(const char *dir, uint64_t first, uint64_t last)
{
    char path[1200];
    tn_pub_log_path(dir, first, path, sizeof(path));
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (uint64_t id = first; id <= last; id++) {
        struct tn_pub_record r = rec(id, TN_EVENT_ACQUIRED, "a", "o");
        char line[TN_PUB_RECORD_MAX];
        size_t n = tn_pub_log_format(&r, line);
        assert_int_equal(fwrite(line, 1, n, f), n);
    }
    assert_int_equal(fclose(f), 0);
}

static void test_publish_log__reader_crosses_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/tn-publog.XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_file(dir, 5, 9);
    write_file(dir, 10, 30);
    struct tn_pub_reader rd;
    tn_pub_reader_init(&rd, dir);
    struct tn_pub_record out[8];
    size_t n = 0;
    tn_pub_reader_seek(&rd, 7);
    uint64_t want = 7;
    while (want <= 25) {
        assert_int_equal(tn_pub_reader_next(&rd, 25, out, 8, &n), TN_OK);
        assert_true(n > 0);
        for (size_t i = 0; i < n; i++)
            assert_true(out[i].id == want++);
    }
    /* At the head: nothing more, no error. */
    assert_int_equal(tn_pub_reader_next(&rd, 25, out, 8, &n), TN_OK);
    assert_int_equal(n, 0);
    /* Before the first file: gone. */
    tn_pub_reader_seek(&rd, 2);
    assert_int_equal(tn_pub_reader_next(&rd, 25, out, 8, &n), TN_ENOTFOUND);
    tn_pub_reader_release(&rd);
    uint64_t *firsts = NULL;
    size_t nf = 0;
    assert_int_equal(tn_pub_log_list(dir, &firsts, &nf), TN_OK);
    assert_int_equal(nf, 2);
    for (size_t i = 0; i < nf; i++) {
        char path[1200];
        tn_pub_log_path(dir, firsts[i], path, sizeof(path));
        assert_int_equal(unlink(path), 0);
    }
    tn_free(firsts);
    assert_int_equal(rmdir(dir), 0);
}

static void test_publish_log__json_parses(void **state)
{
    (void)state;
    struct tn_pub_record r = rec(42, TN_EVENT_ACQUIRED, "q\"\\\x01/é", "o\n");
    r.token = (1ull << 53) - 1; /* tokens stay below 2^53 (DESIGN) */
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    tn_pub_json_record(&b, &r);
    json_error_t err;
    json_t *v = json_loadb(b.data, b.len, 0, &err);
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(v, "name")), r.name);
    assert_string_equal(json_string_value(json_object_get(v, "owner_id")),
                        "o\n");
    assert_string_equal(json_string_value(json_object_get(v, "type")),
                        "acquired");
    assert_int_equal(json_integer_value(json_object_get(v, "id")), 42);
    assert_int_equal(json_integer_value(json_object_get(v, "token")),
                     (1ll << 53) - 1);
    json_decref(v);
    tn_buf_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_publish_log__roundtrip_and_torn),
        cmocka_unit_test(test_publish_log__garbage_refused),
        cmocka_unit_test(test_publish_log__reader_crosses_files),
        cmocka_unit_test(test_publish_log__json_parses),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
