/* SPDX-License-Identifier: MIT */
/* The history parser (pairing, strictness, line numbers, streams) and the
 * tenure-check command line's exit codes 0/1/2, run in-process. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "check/cli.h"
#include "check_hist.h"
#include "common/alloc.h"
#include "tn_test.h"

#include <cmocka.h>

static int parse(const char *text, struct tn_errmsg *em)
{
    struct tn_history h;
    tn_history_init(&h);
    int rc = tn_history_parse(&h, text, strlen(text), em);
    tn_history_release(&h);
    return rc;
}

static void test_check_history__pairs_per_process(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    acq(&b, 0, "w1", "a", 100);
    acq(&b, 1, "w2", "b", 200);
    done(&b, 2, "w2", "acquire", "ok", 7);
    inv(&b, 3, "w2", "renew", "b", 7, NONE);
    done(&b, 4, "w1", "acquire", "info", NONE);
    sink(&b, 5, "b", 7, true, 6);
    struct tn_history h;
    struct tn_errmsg em = {{0}};
    tn_history_init(&h);
    assert_int_equal(tn_history_parse(&h, b.text, b.len, &em), 0);
    assert_int_equal(h.n_ops, 3);
    assert_int_equal(h.n_sinks, 1);
    assert_int_equal(h.n_events, 6);
    const struct tn_history_op *w1 = &h.ops[0];
    assert_string_equal(tn_history_str(&h, w1->proc), "w1");
    assert_int_equal(w1->outcome, TN_HISTORY_INFO);
    assert_int_equal(w1->complete_t, 4 * MS);
    assert_int_equal(w1->complete_line, 5);
    assert_int_equal(w1->ttl_ms, 100);
    const struct tn_history_op *w2 = &h.ops[1];
    assert_int_equal(w2->outcome, TN_HISTORY_OK);
    assert_int_equal(w2->token_out, 7);
    const struct tn_history_op *renew = &h.ops[2];
    assert_int_equal(renew->kind, TN_HISTORY_RENEW);
    assert_int_equal(renew->token_in, 7);
    assert_int_equal(renew->ttl_ms, NONE);
    assert_int_equal(renew->outcome, TN_HISTORY_PENDING);
    assert_int_equal(renew->complete_t, TN_HISTORY_NEVER);
    assert_int_equal(h.sinks[0].hwm_before, 6);
    assert_true(h.sinks[0].admit);
    assert_int_equal(h.sinks[0].line, 6);
    tn_history_release(&h);
}

static void test_check_history__session_ops(void **state)
{
    (void)state;
    /* An open names its session in its ok; a claim under it carries the
     * session and no ttl_ms; renew and end name it on the invoke. */
    const char *text =
        "{\"t\":1,\"proc\":\"w\",\"op\":\"session_open\",\"phase\":"
        "\"invoke\",\"ttl_ms\":500}\n"
        "{\"t\":2,\"proc\":\"w\",\"op\":\"session_open\",\"phase\":"
        "\"ok\",\"session\":\"s1\"}\n"
        "{\"t\":3,\"proc\":\"w/a\",\"op\":\"acquire\",\"phase\":"
        "\"invoke\",\"name\":\"a\",\"session\":\"s1\"}\n"
        "{\"t\":4,\"proc\":\"w/a\",\"op\":\"acquire\",\"phase\":\"ok\","
        "\"token\":9,\"session\":\"s1\"}\n"
        "{\"t\":5,\"proc\":\"w\",\"op\":\"session_renew\",\"phase\":"
        "\"invoke\",\"session\":\"s1\"}\n"
        "{\"t\":6,\"proc\":\"w\",\"op\":\"session_renew\",\"phase\":"
        "\"fail\",\"error\":\"lost\"}\n"
        "{\"t\":7,\"proc\":\"w\",\"op\":\"session_end\",\"phase\":"
        "\"invoke\",\"session\":\"s1\"}\n";
    struct tn_history h;
    struct tn_errmsg em = {{0}};
    tn_history_init(&h);
    assert_int_equal(tn_history_parse(&h, text, strlen(text), &em), 0);
    assert_int_equal(h.n_ops, 4);
    const struct tn_history_op *open = &h.ops[0];
    assert_int_equal(open->kind, TN_HISTORY_SESSION_OPEN);
    assert_string_equal(tn_history_str(&h, open->session), "s1");
    assert_int_equal(open->ttl_ms, 500);
    assert_int_equal(open->name, TN_HISTORY_NO_ID);
    const struct tn_history_op *claim = &h.ops[1];
    assert_int_equal(claim->session, open->session);
    assert_int_equal(claim->ttl_ms, NONE);
    assert_int_equal(claim->token_out, 9);
    const struct tn_history_op *renew = &h.ops[2];
    assert_int_equal(renew->kind, TN_HISTORY_SESSION_RENEW);
    assert_int_equal(renew->ttl_ms, NONE);
    assert_true(renew->lost);
    assert_int_equal(h.ops[3].kind, TN_HISTORY_SESSION_END);
    assert_int_equal(h.ops[3].outcome, TN_HISTORY_PENDING);
    tn_history_release(&h);
}

struct bad_case {
    const char *text; /* the history */
    unsigned line;    /* line the error must name */
};

static const struct bad_case cases[] = {
    {"not json\n", 1},
    {"[1,2]\n", 1},
    {"{\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\",\"name\":"
     "\"a\",\"ttl_ms\":1}\n",
     1},
    {"{\"t\":-1,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"ttl_ms\":1}\n",
     1},
    {"{\"t\":1.5,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"ttl_ms\":1}\n",
     1},
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"grab\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"ttl_ms\":1}\n",
     1},
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"done\","
     "\"name\":\"a\",\"ttl_ms\":1}\n",
     1},
    {"{\"t\":1,\"proc\":\"\",\"op\":\"acquire\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"ttl_ms\":1}\n",
     1},
    /* acquire invoke without ttl_ms */
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\","
     "\"name\":\"a\"}\n",
     1},
    /* renew invoke without token */
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"renew\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"ttl_ms\":1}\n",
     1},
    /* token of the wrong type */
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"renew\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"token\":\"3\"}\n",
     1},
    /* duplicate key */
    {"{\"t\":1,\"t\":2,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":"
     "\"invoke\",\"name\":\"a\",\"ttl_ms\":1}\n",
     1},
    /* completion without an invoke */
    {"\n{\"t\":1,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"ok\","
     "\"token\":1}\n",
     2},
    /* two invokes of one process */
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"ttl_ms\":1}\n"
     "{\"t\":2,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"ttl_ms\":1}\n",
     2},
    /* completion before its invoke */
    {"{\"t\":5,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"ttl_ms\":1}\n"
     "{\"t\":4,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"ok\","
     "\"token\":1}\n",
     2},
    /* completion of another op */
    {"{\"t\":5,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"ttl_ms\":1}\n"
     "{\"t\":6,\"proc\":\"w\",\"op\":\"renew\",\"phase\":\"ok\","
     "\"token\":1}\n",
     2},
    /* completion naming another lease */
    {"{\"t\":5,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"ttl_ms\":1}\n"
     "{\"t\":6,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"ok\","
     "\"name\":\"b\",\"token\":1}\n",
     2},
    /* ok acquire without its token */
    {"{\"t\":5,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"ttl_ms\":1}\n"
     "{\"t\":6,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"ok\"}\n",
     2},
    /* an acquire under a session with a ttl_ms of its own */
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"session\":\"s1\",\"ttl_ms\":1}\n",
     1},
    /* a session open without ttl_ms, a renew and an end without session */
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"session_open\",\"phase\":"
     "\"invoke\"}\n",
     1},
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"session_renew\",\"phase\":"
     "\"invoke\",\"ttl_ms\":1}\n",
     1},
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"session_end\",\"phase\":"
     "\"invoke\"}\n",
     1},
    /* an ok open without the session's id */
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"session_open\",\"phase\":"
     "\"invoke\",\"ttl_ms\":1}\n"
     "{\"t\":2,\"proc\":\"w\",\"op\":\"session_open\",\"phase\":"
     "\"ok\"}\n",
     2},
    /* a completion naming another session, or a session on a lease op */
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"session_end\",\"phase\":"
     "\"invoke\",\"session\":\"s1\"}\n"
     "{\"t\":2,\"proc\":\"w\",\"op\":\"session_end\",\"phase\":"
     "\"ok\",\"session\":\"s2\"}\n",
     2},
    {"{\"t\":1,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\","
     "\"name\":\"a\",\"ttl_ms\":1}\n"
     "{\"t\":2,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"ok\","
     "\"session\":\"s1\",\"token\":1}\n",
     2},
    /* unknown src */
    {"{\"t\":1,\"src\":\"snik\",\"resource\":\"a\",\"token\":1,"
     "\"decision\":\"admit\"}\n",
     1},
    /* sink decision of an unknown kind, and without its token */
    {"{\"t\":1,\"src\":\"sink\",\"resource\":\"a\",\"token\":1,"
     "\"decision\":\"maybe\"}\n",
     1},
    {"{\"t\":1,\"src\":\"sink\",\"resource\":\"a\",\"decision\":"
     "\"admit\"}\n",
     1},
};

static void test_check_history__malformed_is_einval(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tn_errmsg em = {{0}};
        int rc = parse(cases[i].text, &em);
        if (rc != TN_EINVAL)
            print_error("case %zu accepted: %s", i, cases[i].text);
        assert_int_equal(rc, TN_EINVAL);
        char want[32];
        (void)snprintf(want, sizeof(want), "line %u:", cases[i].line);
        if (strncmp(em.text, want, strlen(want)) != 0)
            print_error("case %zu: \"%s\"\n", i, em.text);
        assert_int_equal(strncmp(em.text, want, strlen(want)), 0);
    }
}

static void test_check_history__overlong_line_is_etoobig(void **state)
{
    (void)state;
    size_t n = TN_HISTORY_MAX_LINE_BYTES + 10;
    char *text = tn_malloc(n + 1);
    assert_non_null(text);
    memset(text, ' ', n);
    text[n] = '\0';
    struct tn_errmsg em = {{0}};
    assert_int_equal(parse(text, &em), TN_ETOOBIG);
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    rewind(f);
    struct tn_history h;
    tn_history_init(&h);
    assert_int_equal(tn_history_read_stream(&h, f, &em), TN_ETOOBIG);
    tn_history_release(&h);
    (void)fclose(f);
    tn_free(text);
}

static void test_check_history__stream_equals_buffer(void **state)
{
    (void)state;
    /* Enough lines to cross the stream's read chunks, no final newline. */
    struct hb *b = tn_calloc(1, sizeof(*b));
    assert_non_null(b);
    for (int i = 0; i < 200; i++)
        grant(b, i * 10, i * 10 + 1, "w1", "a", 5, i + 1);
    b->len--;
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(fwrite(b->text, 1, b->len, f), b->len);
    rewind(f);
    struct tn_history h;
    struct tn_errmsg em = {{0}};
    tn_history_init(&h);
    assert_int_equal(tn_history_read_stream(&h, f, &em), 0);
    assert_int_equal(h.n_ops, 200);
    assert_int_equal(h.ops[199].token_out, 200);
    assert_int_equal(h.ops[199].outcome, TN_HISTORY_OK);
    assert_int_equal(h.n_lines, 400);
    tn_history_release(&h);
    (void)fclose(f);
    tn_free(b);
}

/* ---- the command line ---- */

struct cli_run {
    int status;      /* exit status */
    char out[16384]; /* stdout */
    char err[1024];  /* stderr */
};

static void slurp(FILE *f, char *buf, size_t cap)
{
    rewind(f);
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    (void)fclose(f);
}

static void run_cli(const char *stdin_text, const char *arg,
                    struct cli_run *out)
{
    FILE *in = tmpfile();
    FILE *o = tmpfile();
    FILE *e = tmpfile();
    assert_true(in != NULL && o != NULL && e != NULL);
    (void)fputs(stdin_text, in);
    rewind(in);
    char prog[] = "tenure-check";
    char argbuf[256] = "";
    char *argv[] = {prog, argbuf, NULL};
    if (arg != NULL)
        (void)snprintf(argbuf, sizeof(argbuf), "%s", arg);
    out->status = tn_check_cli(arg != NULL ? 2 : 1, argv, in, o, e);
    (void)fclose(in);
    slurp(o, out->out, sizeof(out->out));
    slurp(e, out->err, sizeof(out->err));
}

static json_t *report_of(const struct cli_run *r)
{
    json_error_t jerr;
    json_t *v = json_loads(r->out, 0, &jerr);
    assert_non_null(v);
    return v;
}

static void test_check_history__cli_clean_exits_0(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 1);
    struct cli_run *r = tn_calloc(1, sizeof(*r));
    assert_non_null(r);
    run_cli(b.text, NULL, r);
    assert_int_equal(r->status, 0);
    json_t *v = report_of(r);
    assert_true(json_is_true(json_object_get(v, "valid")));
    assert_int_equal(json_array_size(json_object_get(v, "violations")), 0);
    json_t *counts = json_object_get(v, "counts");
    assert_int_equal(json_object_size(counts), TN_CHECK_N_CLASSES);
    json_decref(v);
    tn_free(r);
}

static void test_check_history__cli_violation_exits_1(void **state)
{
    (void)state;
    struct hb b = {.len = 0};
    grant(&b, 0, 1, "w1", "a", 10, 1);
    sink(&b, 2, "a", 4, true, NONE);
    struct cli_run *r = tn_calloc(1, sizeof(*r));
    assert_non_null(r);
    run_cli(b.text, "-", r);
    assert_int_equal(r->status, 1);
    json_t *v = report_of(r);
    assert_true(json_is_false(json_object_get(v, "valid")));
    json_t *counts = json_object_get(v, "counts");
    assert_int_equal(
        json_integer_value(json_object_get(counts, "sink_never_granted")), 1);
    json_t *viol = json_array_get(json_object_get(v, "violations"), 0);
    assert_string_equal(json_string_value(json_object_get(viol, "class")),
                        "sink_never_granted");
    json_t *ev = json_array_get(json_object_get(viol, "events"), 0);
    assert_int_equal(json_integer_value(json_object_get(ev, "line")), 3);
    assert_int_equal(json_integer_value(json_object_get(ev, "token")), 4);
    json_decref(v);
    tn_free(r);
}

static void test_check_history__cli_malformed_exits_2(void **state)
{
    (void)state;
    struct cli_run *r = tn_calloc(1, sizeof(*r));
    assert_non_null(r);
    run_cli("{\"t\":1}\n", NULL, r);
    assert_int_equal(r->status, 2);
    assert_string_equal(r->out, "");
    assert_non_null(strstr(r->err, "line 1"));
    run_cli("", "/nonexistent/history.jsonl", r);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "cannot open"));
    run_cli("", "--bogus", r);
    assert_int_equal(r->status, 2);
    run_cli("", "--html", r);
    assert_int_equal(r->status, 2);
    assert_non_null(strstr(r->err, "--html: needs a value"));
    tn_free(r);
}

static void test_check_history__cli_help_exits_0(void **state)
{
    (void)state;
    struct cli_run *r = tn_calloc(1, sizeof(*r));
    assert_non_null(r);
    run_cli("", "--help", r);
    assert_int_equal(r->status, 0);
    assert_non_null(strstr(r->out, "usage: tenure-check [--html OUT] [FILE]"));
    tn_free(r);
}

static void test_check_history__cli_empty_history_is_clean(void **state)
{
    (void)state;
    struct cli_run *r = tn_calloc(1, sizeof(*r));
    assert_non_null(r);
    run_cli("", NULL, r);
    assert_int_equal(r->status, 0);
    tn_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_history__pairs_per_process),
        cmocka_unit_test(test_check_history__session_ops),
        cmocka_unit_test(test_check_history__malformed_is_einval),
        cmocka_unit_test(test_check_history__overlong_line_is_etoobig),
        cmocka_unit_test(test_check_history__stream_equals_buffer),
        cmocka_unit_test(test_check_history__cli_clean_exits_0),
        cmocka_unit_test(test_check_history__cli_violation_exits_1),
        cmocka_unit_test(test_check_history__cli_malformed_exits_2),
        cmocka_unit_test(test_check_history__cli_help_exits_0),
        cmocka_unit_test(test_check_history__cli_empty_history_is_clean),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
