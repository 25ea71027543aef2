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
    r.token = (1ull << 53) - 1; /* tokens stay below 2^53 (CONTRACT) */
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

#define SID "0123456789abcdef0123456789abcdef"

static struct tn_pub_record session_rec(uint64_t id, enum tn_event_type t,
                                        enum tn_grant_end end)
{
    struct tn_pub_record r = rec(id, t, "", "group/w1");
    (void)snprintf(r.session_id, sizeof(r.session_id), "%s", SID);
    r.end = end;
    return r;
}

/* The letters of the log are fixed, whatever the enum's order: lines of
 * every type written before sessions read as they did, and a session's
 * records are written (and read back) exactly as log.h says. */
static void test_publish_log__session_records(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        enum tn_event_type type;
    } old[] = {{"1 a 5 5 9 1 1 on\n", TN_EVENT_ACQUIRED},
               {"2 r 5 5 9 1 1 on\n", TN_EVENT_RELEASED},
               {"3 e 5 5 9 1 1 on\n", TN_EVENT_EXPIRED},
               {"4 v 5 5 9 1 1 on\n", TN_EVENT_REVOKED},
               {"5 x 0 0 9 0 0 \n", TN_EVENT_RESET}};
    struct tn_pub_record back;
    char line[TN_PUB_RECORD_MAX];
    for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
        size_t len = strlen(old[i].line);
        assert_int_equal(
            tn_pub_log_parse(old[i].line, old[i].line + len, &back), (long)len);
        assert_int_equal(back.type, old[i].type);
        assert_string_equal(back.session_id, "");
        assert_int_equal(tn_pub_log_format(&back, line), len);
        assert_memory_equal(line, old[i].line, len);
    }
    struct tn_pub_record r = session_rec(6, TN_EVENT_SESSION_OPENED, 0);
    size_t n = tn_pub_log_format(&r, line);
    static const char opened[] =
        "6 o 0 0 9223372036854775807 8 32 group/w1" SID "\n";
    assert_int_equal(n, sizeof(opened) - 1);
    assert_memory_equal(line, opened, n);
    static const enum tn_grant_end ends[] = {
        TN_GRANT_RELEASED, TN_GRANT_EXPIRED, TN_GRANT_REVOKED};
    for (size_t i = 0; i < 3; i++) {
        r = session_rec(7, TN_EVENT_SESSION_ENDED, ends[i]);
        n = tn_pub_log_format(&r, line);
        assert_int_equal(line[2], 'c');
        assert_int_equal(line[4], (char)('1' + i)); /* the end's code */
        assert_int_equal(tn_pub_log_parse(line, line + n, &back), (long)n);
        assert_int_equal(back.type, TN_EVENT_SESSION_ENDED);
        assert_int_equal(back.end, ends[i]);
        assert_string_equal(back.session_id, SID);
        assert_string_equal(back.owner_id, "group/w1");
        assert_string_equal(back.name, "");
        assert_true(back.token == 0 && back.floor == 0);
        for (size_t cut = 0; cut < n; cut++)
            assert_int_equal(tn_pub_log_parse(line, line + cut, &back), 0);
    }
    /* A session record must carry a session id, and an end one of the
     * three ends. */
    static const char *const bad[] = {
        "8 o 0 0 9 1 1 on\n",
        "8 o 0 0 9 1 32 o0123456789ABCDEF0123456789abcdef\n",
        "8 c 0 0 9 1 32 o" SID "\n",
        "8 c 4 0 9 1 32 o" SID "\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(
            tn_pub_log_parse(bad[i], bad[i] + strlen(bad[i]), &back), -1);
}

/* A session's record for Redis and Kafka is the server's own event's
 * shape: session_id, owner_id, reason; no name, token or floor. */
static void test_publish_log__session_json(void **state)
{
    (void)state;
    struct tn_pub_record r =
        session_rec(9, TN_EVENT_SESSION_ENDED, TN_GRANT_REVOKED);
    struct tn_buf b;
    tn_buf_init(&b, 4096);
    tn_pub_json_record(&b, &r);
    json_error_t err;
    json_t *v = json_loadb(b.data, b.len, 0, &err);
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(v, "type")),
                        "session_ended");
    assert_string_equal(json_string_value(json_object_get(v, "session_id")),
                        SID);
    assert_string_equal(json_string_value(json_object_get(v, "owner_id")),
                        "group/w1");
    assert_string_equal(json_string_value(json_object_get(v, "reason")),
                        "revoked");
    assert_int_equal(json_integer_value(json_object_get(v, "id")), 9);
    assert_null(json_object_get(v, "name"));
    assert_null(json_object_get(v, "token"));
    json_decref(v);
    tn_buf_reset(&b);
    r = session_rec(10, TN_EVENT_SESSION_OPENED, 0);
    tn_pub_json_record(&b, &r);
    v = json_loadb(b.data, b.len, 0, &err);
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(v, "type")),
                        "session_opened");
    assert_null(json_object_get(v, "reason"));
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
        cmocka_unit_test(test_publish_log__session_records),
        cmocka_unit_test(test_publish_log__session_json),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
