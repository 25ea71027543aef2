/* SPDX-License-Identifier: MIT */
/* tn-chaos: the client side of the fault-injection harness
 * (docs/safety/fault-injection.md).
 *   tn-chaos now                      CLOCK_MONOTONIC ns (the history clock)
 *   tn-chaos clocks                   wall, monotonic and boottime ms
 *   tn-chaos client --url U --out F [--sink PATH] [options]
 *                                     (--sessions N: session workers)
 *   tn-chaos sink-dump PATH           committed sink decisions as history
 *   tn-chaos note --out F TEXT        a nemesis line, stamped now
 *   tn-chaos sql DB SQL               run SQL on a stopped server's file
 *   tn-chaos last-writer SINK         proc of the latest admitted write */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chaos.h"
#include "common/clock.h"
#include "store/embedded/disk.h"

static pthread_mutex_t hist_mu = PTHREAD_MUTEX_INITIALIZER;

int chaos_hist_open(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        (void)fprintf(stderr, "tn-chaos: %s: %s\n", path, strerror(errno));
    return fd;
}

void chaos_hist_line(int fd, const char *line, size_t len)
{
    pthread_mutex_lock(&hist_mu);
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, line + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    pthread_mutex_unlock(&hist_mu);
}

/* Run SQL (one or more statements) on a SQLite file, in one transaction:
 * the reboot profile rewrites a stopped server's store with it. */
static int chaos_sql(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    char *err = NULL;
    int rc = 1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        goto out;
    sqlite3_busy_timeout(db, CHAOS_SINK_BUSY_MS);
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &err) != SQLITE_OK)
        goto out;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        (void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        goto out;
    }
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, &err) == SQLITE_OK)
        rc = 0;
out:
    if (rc != 0)
        (void)fprintf(stderr, "tn-chaos sql %s: %s\n", path,
                      err != NULL ? err : sqlite3_errmsg(db));
    sqlite3_free(err);
    sqlite3_close(db);
    return rc;
}

static int num(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int usage(void)
{
    (void)fprintf(
        stderr,
        "usage: tn-chaos now | clocks\n"
        "       tn-chaos sink-dump SINK | last-writer SINK | sql DB SQL\n"
        "       tn-chaos settle DATA_DIR\n"
        "       tn-chaos note --out HISTORY TEXT\n"
        "       tn-chaos client --url URL[,URL...] --out HISTORY [--sink "
        "PATH]\n"
        "         [--brokers LIST --topic T] (write records to Kafka)\n"
        "         [--proc P] [--prefix NAMEPREFIX] [--threads N] [--names N]\n"
        "         [--ttl-min MS] [--ttl-max MS] [--duration-ms MS] "
        "[--stop-file F]\n"
        "         [--timeout-ms MS] [--abort-pct N] [--max-rounds N] [--reveal "
        "N]\n"
        "         [--sessions BATCH] [--seed N]\n");
    return 2;
}

static int cmd_client(int argc, char **argv)
{
    struct chaos_opts o = {.proc_prefix = "c",
                           .name_prefix = "chaos:",
                           .threads = 3,
                           .names = 3,
                           .ttl_min_ms = 300,
                           .ttl_max_ms = 900,
                           .duration_ms = 5000,
                           .timeout_ms = 1000,
                           .max_rounds = 4,
                           .seed = 1};
    for (int i = 2; i < argc; i++) {
        const char *k = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t n = 0;
        if (v == NULL)
            return usage();
        i++;
        if (strcmp(k, "--url") == 0)
            o.url = v;
        else if (strcmp(k, "--out") == 0)
            o.out = v;
        else if (strcmp(k, "--sink") == 0)
            o.sink = v;
        else if (strcmp(k, "--brokers") == 0)
            o.brokers = v;
        else if (strcmp(k, "--topic") == 0)
            o.topic = v;
        else if (strcmp(k, "--proc") == 0)
            o.proc_prefix = v;
        else if (strcmp(k, "--prefix") == 0)
            o.name_prefix = v;
        else if (strcmp(k, "--stop-file") == 0)
            o.stop_file = v;
        else if (num(v, 0, INT64_MAX / 1000000, &n) < 0)
            return usage();
        else if (strcmp(k, "--threads") == 0 && n <= 64)
            o.threads = (unsigned)n;
        else if (strcmp(k, "--names") == 0 && n <= 1000)
            o.names = (unsigned)n;
        else if (strcmp(k, "--ttl-min") == 0)
            o.ttl_min_ms = n;
        else if (strcmp(k, "--ttl-max") == 0)
            o.ttl_max_ms = n;
        else if (strcmp(k, "--duration-ms") == 0)
            o.duration_ms = n;
        else if (strcmp(k, "--timeout-ms") == 0)
            o.timeout_ms = n;
        else if (strcmp(k, "--abort-pct") == 0 && n <= 100)
            o.abort_pct = (unsigned)n;
        else if (strcmp(k, "--max-rounds") == 0 && n <= 100)
            o.max_rounds = (unsigned)n;
        else if (strcmp(k, "--reveal") == 0 && n <= 100)
            o.reveal = (unsigned)n;
        else if (strcmp(k, "--sessions") == 0 && n <= 256)
            o.sessions = (unsigned)n;
        else if (strcmp(k, "--seed") == 0)
            o.seed = (uint64_t)n;
        else
            return usage();
    }
    if (o.url == NULL || o.out == NULL || o.ttl_max_ms < o.ttl_min_ms ||
        o.threads == 0 || o.names == 0 || o.ttl_min_ms <= 0 ||
        o.duration_ms <= 0 || o.timeout_ms <= 0 ||
        (o.brokers != NULL) != (o.topic != NULL) ||
        strlen(o.name_prefix) > 64 || strlen(o.proc_prefix) > 32 ||
        strpbrk(o.name_prefix, "\"\\/%") != NULL ||
        strpbrk(o.proc_prefix, "\"\\") != NULL)
        return usage();
    return chaos_client_run(&o);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "now") == 0) {
        (void)printf("%" PRId64 "\n", tn_clock_mono_ns());
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "clocks") == 0) {
        /* CLOCK_REALTIME, CLOCK_MONOTONIC and CLOCK_BOOTTIME in ms: what
         * the clock profile checks libfaketime against. */
        (void)printf("%" PRId64 " %" PRId64 " %" PRId64 "\n",
                     tn_clock_wall_ms(), tn_clock_mono_ms(), tn_clock_now_ms());
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "sql") == 0)
        return chaos_sql(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "settle") == 0) {
        /* Apply what the embedded store's journal holds beyond tenure.db,
         * as a start would, so that a profile can rewrite the file as if
         * it held everything (tenured must be down). */
        struct tn_disk *d = NULL;
        struct tn_errmsg em = {{0}};
        if (tn_disk_open(argv[2], 0, &d, &em) < 0) {
            (void)fprintf(stderr, "tn-chaos settle: %s\n", em.text);
            return 1;
        }
        tn_disk_close(d);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "last-writer") == 0)
        return chaos_sink_last_writer(argv[2]) == 0 ? 0 : 1;
    if (argc == 3 && strcmp(argv[1], "sink-dump") == 0)
        return chaos_sink_dump(argv[2]) == 0 ? 0 : 1;
    if (argc == 5 && strcmp(argv[1], "note") == 0 &&
        strcmp(argv[2], "--out") == 0) {
        if (strpbrk(argv[4], "\"\\\n") != NULL)
            return usage();
        int fd = chaos_hist_open(argv[3]);
        if (fd < 0)
            return 1;
        char line[1024];
        int n = snprintf(line, sizeof(line),
                         "{\"t\":%" PRId64 ",\"src\":\"nemesis\","
                         "\"fault\":\"%s\"}\n",
                         tn_clock_mono_ns(), argv[4]);
        if (n < 0 || (size_t)n >= sizeof(line))
            return usage();
        chaos_hist_line(fd, line, (size_t)n);
        (void)close(fd);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "client") == 0)
        return cmd_client(argc, argv);
    return usage();
}
