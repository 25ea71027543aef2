/* SPDX-License-Identifier: MIT */
/* The materializer's sinks: the table of sinks.c picks the sink by the
 * spec's prefix and refuses others; several processes opening the same
 * new SQLite sink at the same moment all get it (SQLite refuses some of
 * them at once with SQLITE_BUSY while they race to switch the file to WAL;
 * the open retries those). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kafka/sink.h"
#include "tn_test.h"

#include <cmocka.h>

#define OPENERS 3
#define ROUNDS 30

/* Child: wait for the start byte, open the sink, exit 0 on success. */
static void opener(const char *spec, int start_fd)
{
    char go;
    if (read(start_fd, &go, 1) != 1)
        _exit(2);
    struct tn_sink *s = NULL;
    struct tn_errmsg em = {{0}};
    if (tn_sink_open(spec, &s, &em) < 0) {
        (void)fprintf(stderr, "open: %s\n", em.text);
        _exit(1);
    }
    s->ops->close(s);
    _exit(0);
}

static void remove_sink(const char *path)
{
    static const char *const ext[] = {"", "-wal", "-shm"};
    char p[256];
    for (size_t i = 0; i < 3; i++) {
        (void)snprintf(p, sizeof(p), "%s%s", path, ext[i]);
        (void)unlink(p);
    }
}

static void test_sink__simultaneous_opens_of_a_new_sink(void **state)
{
    (void)state;
    char dir[] = "/tmp/tn-sink.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    char spec[160];
    (void)snprintf(path, sizeof(path), "%s/sink.db", dir);
    (void)snprintf(spec, sizeof(spec), "sqlite:%s", path);
    int failed = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int fds[2];
        assert_int_equal(pipe(fds), 0);
        pid_t kids[OPENERS];
        for (int i = 0; i < OPENERS; i++) {
            kids[i] = fork();
            assert_true(kids[i] >= 0);
            if (kids[i] == 0) {
                (void)close(fds[1]);
                opener(spec, fds[0]);
            }
        }
        (void)close(fds[0]);
        char go[OPENERS] = {0};
        assert_int_equal(write(fds[1], go, OPENERS), OPENERS);
        (void)close(fds[1]);
        for (int i = 0; i < OPENERS; i++) {
            int st = 0;
            assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                failed++;
        }
        remove_sink(path);
    }
    (void)rmdir(dir);
    assert_int_equal(failed, 0);
}

/* Specs no line of the table takes: TN_EINVAL, nothing opened, and the
 * error lists what the table knows. */
static void test_sink__unknown_specs_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"sqlite:", "mysql://h/db", "SQLITE:x",
                                      "postgresql:/x", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tn_sink *s = NULL;
        struct tn_errmsg em = {{0}};
        assert_int_equal(tn_sink_open(bad[i], &s, &em), TN_EINVAL);
        assert_null(s);
        assert_non_null(strstr(em.text, "unknown sink"));
        assert_non_null(strstr(em.text, "sqlite:PATH or postgresql://..."));
    }
}

/* The SQLite line of the table opens the file after the prefix. */
static void test_sink__sqlite_spec_opens_the_path(void **state)
{
    (void)state;
    char dir[] = "/tmp/tn-sink-spec.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[64];
    char spec[80];
    (void)snprintf(path, sizeof(path), "%s/s.db", dir);
    (void)snprintf(spec, sizeof(spec), "sqlite:%s", path);
    struct tn_sink *s = NULL;
    assert_int_equal(tn_sink_open(spec, &s, NULL), 0);
    assert_non_null(s);
    s->ops->close(s);
    assert_int_equal(access(path, F_OK), 0);
    remove_sink(path);
    (void)rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sink__simultaneous_opens_of_a_new_sink),
        cmocka_unit_test(test_sink__unknown_specs_refused),
        cmocka_unit_test(test_sink__sqlite_spec_opens_the_path),
    };
    return TN_RUN_TESTS(tests, NULL, NULL);
}
