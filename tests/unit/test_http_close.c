/* SPDX-License-Identifier: MIT */
/* Half-closed connections (issue #36, 2026-12-07): a client that sends its
 * requests and then shuts down its sending side still gets every answer, then
 * the close (RFC 9112 section 9.6).  Each script is sent whole, cut in two at
 * every byte and byte by byte, and the FIN follows the last piece after
 * 0 to 3 loop turns, so it meets the answer at every stage (not yet
 * made, made but unwritten, written).  A parked waiter's half-closed
 * HTTP/1.1 client is asked with an interim 100 Continue whether it is
 * still there; one that closed its socket is then seen gone. */
#include "http_fixture.h"

#define CONTINUE "HTTP/1.1 100 Continue\r\n\r\n"

struct script {
    const char *in;     /* bytes sent, then the FIN */
    const char *expect; /* every answer, concatenated; then the close */
};

static void run_cut(struct rig *rig, const struct script *sc,
                    const size_t *cuts, size_t n_cuts, int fin_after)
{
    size_t len = strlen(sc->in), at = 0;
    int fd = client_of(rig);
    for (size_t i = 0; i <= n_cuts; i++) {
        size_t end = i < n_cuts ? cuts[i] : len;
        assert_int_equal(send(fd, sc->in + at, end - at, MSG_NOSIGNAL),
                         (ssize_t)(end - at));
        at = end;
        if (i < n_cuts)
            turns(rig, 2);
    }
    turns(rig, fin_after);
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    struct tn_buf out;
    tn_buf_init(&out, 1 << 16);
    bool closed = false;
    drain(rig, fd, &out, &closed);
    if (out.len != strlen(sc->expect) ||
        memcmp(out.data, sc->expect, out.len) != 0)
        fail_msg("script %.40s in %zu pieces, FIN after %d turns: got [%s]",
                 sc->in, n_cuts + 1, fin_after,
                 out.data != NULL ? out.data : "");
    if (!closed)
        fail_msg("script %.40s in %zu pieces, FIN after %d turns: left open",
                 sc->in, n_cuts + 1, fin_after);
    tn_buf_release(&out);
    (void)close(fd);
    turns(rig, 2);
}

static void run_script(struct rig *rig, const struct script *sc)
{
    size_t len = strlen(sc->in);
    size_t cuts[256];
    assert_true(len <= sizeof(cuts) / sizeof(cuts[0]));
    for (size_t k = 1; k < len; k++)
        cuts[k - 1] = k;
    for (int fin_after = 0; fin_after <= 3; fin_after++) {
        run_cut(rig, sc, NULL, 0, fin_after);
        for (size_t k = 1; k < len; k++)
            run_cut(rig, sc, &k, 1, fin_after);
        run_cut(rig, sc, cuts, len - 1, fin_after);
    }
}

/* The echo answer for body b, with "Connection: close". */
static const char *ok_close(const char *b)
{
    char *out = slot();
    (void)snprintf(out, 2048,
                   "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                   "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                   strlen(b), b);
    return out;
}

static const char *refused(const char *msg)
{
    char *out = slot();
    (void)snprintf(out, 2048,
                   "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
                   "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                   strlen(msg), msg);
    return out;
}

static void test_http__half_close_connection_close(void **state)
{
    struct script sc = {"GET /1 HTTP/1.1\r\nConnection: close\r\n\r\n",
                        ok_close("m=0 p=/1 q=- b=")};
    run_script(*state, &sc);
}

static void test_http__half_close_http10(void **state)
{
    struct script sc = {"GET /1 HTTP/1.0\r\n\r\n", ok_close("m=0 p=/1 q=- b=")};
    run_script(*state, &sc);
}

static void test_http__half_close_malformed(void **state)
{
    struct script sc = {"GET /1 HTTP/1.1 junk\r\n\r\n",
                        refused("malformed HTTP request")};
    run_script(*state, &sc);
}

static void test_http__half_close_keep_alive(void **state)
{
    struct script sc = {"GET /1 HTTP/1.1\r\n\r\nPOST /2 HTTP/1.1\r\n"
                        "Content-Length: 2\r\n\r\nhi",
                        ok("m=0 p=/1 q=- b=", "m=2 p=/2 q=- b=hi", NULL)};
    run_script(*state, &sc);
}

/* More requests than the pipeline cap (4 here) before the FIN: the ones
 * behind the cap are read once answers leave, the FIN after them. */
static void test_http__half_close_past_the_pipeline(void **state)
{
    struct script sc = {
        "GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n"
        "GET /3 HTTP/1.1\r\n\r\nGET /4 HTTP/1.1\r\n\r\n"
        "GET /5 HTTP/1.1\r\n\r\nGET /6 HTTP/1.1\r\n\r\n",
        ok("m=0 p=/1 q=- b=", "m=0 p=/2 q=- b=", "m=0 p=/3 q=- b=",
           "m=0 p=/4 q=- b=", "m=0 p=/5 q=- b=", "m=0 p=/6 q=- b=", NULL)};
    run_script(*state, &sc);
}

/* A request the FIN cuts short is refused, after the whole ones. */
static void test_http__half_close_cut_short(void **state)
{
    char want[1024];
    (void)snprintf(want, sizeof(want), "%s%s", ok("m=0 p=/1 q=- b=", NULL),
                   refused("request cut short by the end of the input"));
    struct script sc = {"GET /1 HTTP/1.1\r\n\r\nPOST /2 HTTP/1.1\r\n"
                        "Content-Length: 5\r\n\r\nhi",
                        want};
    run_script(*state, &sc);
}

/* A new connection with one request parked: its socket. */
static int park_one(struct rig *rig, const char *in)
{
    the_app.park = true;
    the_app.disconnects = 0;
    int fd = client_of(rig);
    assert_int_equal(send(fd, in, strlen(in), 0), (ssize_t)strlen(in));
    turns(rig, 3);
    assert_int_equal(the_app.n_parked, 1);
    return fd;
}

/* A parked waiter's client half-closes: it is still there (it was sent a
 * 100 Continue, which it skips), and its answer comes, then the close. */
static void test_http__half_close_while_parked(void **state)
{
    struct rig *rig = *state;
    int fd = park_one(rig, "GET /park HTTP/1.1\r\n\r\n");
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    turns(rig, 3);
    assert_int_equal(the_app.disconnects, 0);
    assert_true(tn_http_req_is_connected(the_app.parked[0]));
    tn_http_reply(the_app.parked[0], 200, "text/plain", "P", 1, 0);
    the_app.n_parked = 0;
    struct tn_buf out;
    tn_buf_init(&out, 1 << 16);
    bool closed = false;
    drain(rig, fd, &out, &closed);
    char want[512];
    (void)snprintf(want, sizeof(want), "%s%s", CONTINUE, ok("P", NULL));
    assert_string_equal(out.data, want);
    assert_true(closed);
    tn_buf_release(&out);
    (void)close(fd);
    turns(rig, 2);
    the_app.park = false;
}

/* The FIN was the first half of a close: writing the 100 Continue finds
 * the socket gone, and the parked request hears it at once. */
static void test_http__close_after_half_close_while_parked(void **state)
{
    struct rig *rig = *state;
    int fd = park_one(rig, "GET /park HTTP/1.1\r\n\r\n");
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    turns(rig, 3);
    assert_int_equal(the_app.disconnects, 0);
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

/* An HTTP/1.0 client must not be sent a 100 Continue: its half-close
 * counts as leaving, and the answer the application then gives still
 * goes out before the close. */
static void test_http__half_close_http10_while_parked(void **state)
{
    struct rig *rig = *state;
    int fd = park_one(rig, "GET /park HTTP/1.0\r\n\r\n");
    assert_int_equal(shutdown(fd, SHUT_WR), 0);
    turns(rig, 3);
    assert_int_equal(the_app.disconnects, 1);
    assert_false(tn_http_req_is_connected(the_app.parked[0]));
    tn_http_reply(the_app.parked[0], 200, "text/plain", "P", 1, 0);
    the_app.n_parked = 0;
    struct tn_buf out;
    tn_buf_init(&out, 1 << 16);
    bool closed = false;
    drain(rig, fd, &out, &closed);
    assert_string_equal(out.data, ok_close("P"));
    assert_true(closed);
    tn_buf_release(&out);
    (void)close(fd);
    turns(rig, 2);
    the_app.park = false;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http__half_close_connection_close),
        cmocka_unit_test(test_http__half_close_http10),
        cmocka_unit_test(test_http__half_close_malformed),
        cmocka_unit_test(test_http__half_close_keep_alive),
        cmocka_unit_test(test_http__half_close_past_the_pipeline),
        cmocka_unit_test(test_http__half_close_cut_short),
        cmocka_unit_test(test_http__half_close_while_parked),
        cmocka_unit_test(test_http__close_after_half_close_while_parked),
        cmocka_unit_test(test_http__half_close_http10_while_parked),
    };
    return TN_RUN_TESTS(tests, rig_setup, rig_teardown);
}
