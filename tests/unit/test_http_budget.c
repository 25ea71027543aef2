/* SPDX-License-Identifier: MIT */
/* The HTTP front end's budgets, over socketpairs: requests parked for
 * their answer keep their order and hear their client leave; a pump's
 * share of a loop turn and the requests a connection may have in flight
 * follow the size of its answers; a stream over its budget is cut. */
#include "http_fixture.h"

/* A connection that has had small answers: it may then have
 * --max-pipeline requests in flight (a new one starts at one). */
static int warm_client(struct rig *rig)
{
    int fd = client_of(rig);
    const char *in = "GET /w HTTP/1.1\r\n\r\n";
    for (int i = 0; i < 6; i++) {
        assert_int_equal(send(fd, in, strlen(in), 0), (ssize_t)strlen(in));
        struct tn_buf out;
        tn_buf_init(&out, 1 << 16);
        bool closed = false;
        drain(rig, fd, &out, &closed);
        assert_string_equal(out.data, ok("m=0 p=/w q=- b=", NULL));
        tn_buf_release(&out);
    }
    return fd;
}

static void test_http__parked_keeps_order(void **state)
{
    struct rig *rig = *state;
    the_app.park = true;
    int fd = warm_client(rig);
    const char *in = "GET /park HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n";
    assert_int_equal(send(fd, in, strlen(in), 0), (ssize_t)strlen(in));
    struct tn_buf out;
    tn_buf_init(&out, 1 << 16);
    bool closed = false;
    drain(rig, fd, &out, &closed);
    assert_int_equal(out.len, 0); /* /2 is done but waits for /park */
    assert_int_equal(the_app.n_parked, 1);
    assert_int_equal(tn_http_pending(rig->h), 1);
    tn_http_reply(the_app.parked[0], 200, "text/plain", "P", 1, 0);
    the_app.n_parked = 0;
    drain(rig, fd, &out, &closed);
    const char *want = ok("P", "m=0 p=/2 q=- b=", NULL);
    assert_string_equal(out.data, want);
    tn_buf_release(&out);
    (void)close(fd);
    turns(rig, 2);
    the_app.park = false;
}

/* Requests answered at once with large replies: one pump starts no more
 * of them once its replies pass the share in bytes, so a client
 * pipelining large lists gets about one per loop turn and cannot make a
 * turn long for everyone else; all are still answered, in order. */
static void test_http__share_in_bytes(void **state)
{
    struct rig *rig = *state;
    the_app.big = 0;
    int fd = client_of(rig);
    const char *in = "GET /big HTTP/1.1\r\n\r\nGET /big HTTP/1.1\r\n\r\n"
                     "GET /big HTTP/1.1\r\n\r\nGET /big HTTP/1.1\r\n\r\n";
    assert_int_equal(send(fd, in, strlen(in), 0), (ssize_t)strlen(in));
    turns(rig, 1); /* its event's pump, then the flush's */
    assert_int_equal(the_app.big, 2);
    struct tn_buf out;
    tn_buf_init(&out, 1 << 20);
    bool closed = false;
    drain(rig, fd, &out, &closed);
    assert_false(closed);
    assert_int_equal(the_app.big, 4);
    assert_int_equal(out.len, 4 * BIG_ANSWER_BYTES);
    tn_buf_release(&out);
    (void)close(fd);
    turns(rig, 2);
}

/* Requests in flight follow the size of a connection's answers: a new
 * connection may have one, one with small answers --max-pipeline (4
 * here), one whose answers pass a share one again.  Answers that wait
 * for a commit are all made when it lands, so this is what bounds that
 * work per connection. */
static void test_http__depth_follows_answers(void **state)
{
    struct rig *rig = *state;
    the_app.park = true;
    const char *park4 = "GET /park HTTP/1.1\r\n\r\nGET /park HTTP/1.1\r\n\r\n"
                        "GET /park HTTP/1.1\r\n\r\nGET /park HTTP/1.1\r\n\r\n";
    struct tn_buf out;
    tn_buf_init(&out, 1 << 20);
    bool closed = false;
    /* new: one in flight */
    int fresh = client_of(rig);
    assert_int_equal(send(fresh, park4, strlen(park4), 0),
                     (ssize_t)strlen(park4));
    turns(rig, 3);
    assert_int_equal(the_app.n_parked, 1);
    tn_http_reply(the_app.parked[0], 200, "text/plain", "P", 1, 0);
    the_app.n_parked = 0;
    (void)close(fresh);
    turns(rig, 3);
    the_app.n_parked = 0;
    /* small answers: all four */
    int fd = warm_client(rig);
    assert_int_equal(send(fd, park4, strlen(park4), 0), (ssize_t)strlen(park4));
    turns(rig, 3);
    assert_int_equal(the_app.n_parked, 4);
    for (size_t i = 0; i < 4; i++)
        tn_http_reply(the_app.parked[i], 200, "text/plain", "P", 1, 0);
    the_app.n_parked = 0;
    drain(rig, fd, &out, &closed);
    assert_string_equal(out.data, ok("P", "P", "P", "P", NULL));
    tn_buf_reset(&out);
    /* then a large answer: one again */
    const char *big = "GET /big HTTP/1.1\r\n\r\n";
    assert_int_equal(send(fd, big, strlen(big), 0), (ssize_t)strlen(big));
    assert_int_equal(send(fd, park4, strlen(park4), 0), (ssize_t)strlen(park4));
    turns(rig, 3);
    assert_int_equal(the_app.n_parked, 1);
    for (int answered = 0; answered < 4;) { /* small answers widen it */
        for (size_t i = 0; i < the_app.n_parked; i++, answered++)
            tn_http_reply(the_app.parked[i], 200, "text/plain", "P", 1, 0);
        the_app.n_parked = 0;
        turns(rig, 3);
    }
    assert_int_equal(the_app.n_parked, 0);
    drain(rig, fd, &out, &closed);
    assert_false(closed);
    assert_int_equal(out.len, BIG_ANSWER_BYTES + 4 * strlen(ok("P", NULL)));
    tn_buf_release(&out);
    (void)close(fd);
    turns(rig, 2);
    the_app.park = false;
}

/* A new connection with one request parked: its socket. */
static int park_one(struct rig *rig)
{
    the_app.park = true;
    the_app.disconnects = 0;
    int fd = client_of(rig);
    const char *in = "GET /park HTTP/1.1\r\n\r\n";
    assert_int_equal(send(fd, in, strlen(in), 0), (ssize_t)strlen(in));
    turns(rig, 3);
    assert_int_equal(the_app.n_parked, 1);
    return fd;
}

/* The client of a parked request leaves: the application hears it at
 * once, and the request stays valid until it is answered. */
static void test_http__disconnect_while_parked(void **state)
{
    struct rig *rig = *state;
    int fd = park_one(rig);
    assert_true(tn_http_req_is_connected(the_app.parked[0]));
    (void)close(fd);
    turns(rig, 3);
    assert_int_equal(the_app.disconnects, 1);
    assert_false(tn_http_req_is_connected(the_app.parked[0]));
    tn_http_reply(the_app.parked[0], 200, "text/plain", "P", 1, 0);
    the_app.n_parked = 0;
    assert_int_equal(tn_http_pending(rig->h), 0);
    turns(rig, 2);
    the_app.park = false;
}

static void on_stream_close(void *ctx)
{
    int *closed = ctx;
    (*closed)++;
}

static void stream_handler(void *arg, struct tn_http_req *r)
{
    struct app *a = arg;
    a->parked[a->n_parked++] = r;
}

/* A stream over its budget refuses the write; its last words go out and
 * the connection closes. */
static void test_http__stream_budget(void **state)
{
    struct rig *rig = *state;
    (void)rig;
    struct tn_loop *loop = tn_loop_new();
    struct tn_http *h = NULL;
    struct app a = {0};
    struct tn_http_config cfg = {.max_connections = 4,
                                 .request_timeout_ms = 30000,
                                 .max_body_bytes = 64,
                                 .max_header_bytes = 256,
                                 .handler = stream_handler,
                                 .app = &a};
    struct tn_errmsg em = {{0}};
    assert_int_equal(tn_http_start(loop, &cfg, &h, &em), 0);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(tn_http_adopt(h, sv[0]), 0);
    const char *in = "GET /s HTTP/1.1\r\n\r\n";
    assert_int_equal(send(sv[1], in, strlen(in), 0), (ssize_t)strlen(in));
    for (int i = 0; i < 3; i++)
        (void)tn_loop_run_once(loop, 0);
    assert_int_equal(a.n_parked, 1);
    int closed = 0;
    struct tn_http_stream *s = tn_http_reply_stream(
        a.parked[0], "text/event-stream", 1024, on_stream_close, &closed);
    char chunk[256];
    memset(chunk, 'e', sizeof(chunk));
    int rc = 0;
    for (int i = 0; i < 100 && rc == 0; i++)
        rc = tn_http_stream_write(s, chunk, sizeof(chunk)); /* never read */
    assert_int_equal(rc, TN_ETOOBIG);
    struct tn_http_stats st;
    tn_http_get_stats(h, &st);
    assert_true(st.stream_bytes <= 1024 + 64);
    tn_http_stream_cut(s, "bye", 3);
    for (int i = 0; i < 4; i++)
        (void)tn_loop_run_once(loop, 0);
    assert_int_equal(closed, 1);
    tn_http_get_stats(h, &st);
    assert_int_equal(st.streams_cut, 1);
    assert_int_equal(st.stream_bytes, 0);
    (void)close(sv[1]);
    tn_http_stop(h);
    tn_loop_free(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http__parked_keeps_order),
        cmocka_unit_test(test_http__share_in_bytes),
        cmocka_unit_test(test_http__depth_follows_answers),
        cmocka_unit_test(test_http__disconnect_while_parked),
        cmocka_unit_test(test_http__stream_budget),
    };
    return TN_RUN_TESTS(tests, rig_setup, rig_teardown);
}
