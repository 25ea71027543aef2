/* SPDX-License-Identifier: MIT */
/* zk-load: closed-loop load on a ZooKeeper server for bench/suite.sh.
 *   zk-load HOST:PORT create|cycle SECONDS [HANDLES] [INFLIGHT]
 * HANDLES sessions (default 10), each keeping INFLIGHT (default 5)
 * asynchronous operations outstanding: "create" makes a new ephemeral
 * node per operation, "cycle" creates an ephemeral node then deletes it
 * (one cycle = both).  After one second of warm-up it counts completed
 * creates (create) or cycles (cycle) for SECONDS and prints
 * "ops N per_s R errors E".  Exit 1 when the server cannot be reached. */
#define _POSIX_C_SOURCE 200809L
#define THREADED 1
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zookeeper/zookeeper.h>

#define MAX_HANDLES 64
#define MAX_INFLIGHT 64

struct slot {
    zhandle_t *zh;
    int handle;
    char path[96];
};

static atomic_long done_ops;
static atomic_long errors;
static atomic_long seq;
static atomic_long outstanding;
static atomic_int stopping;
static int cycle_mode;

static void issue(struct slot *s);

static void on_delete(int rc, const void *data)
{
    struct slot *s = (struct slot *)(uintptr_t)data;
    if (rc == ZOK)
        atomic_fetch_add(&done_ops, 1);
    else
        atomic_fetch_add(&errors, 1);
    issue(s);
}

static void on_create(int rc, const char *value, const void *data)
{
    struct slot *s = (struct slot *)(uintptr_t)data;
    (void)value;
    if (rc != ZOK) {
        atomic_fetch_add(&errors, 1);
        issue(s);
        return;
    }
    if (!cycle_mode) {
        atomic_fetch_add(&done_ops, 1);
        issue(s);
        return;
    }
    if (zoo_adelete(s->zh, s->path, -1, on_delete, s) != ZOK) {
        atomic_fetch_add(&errors, 1);
        atomic_fetch_sub(&outstanding, 1);
    }
}

static void issue(struct slot *s)
{
    if (atomic_load(&stopping)) {
        atomic_fetch_sub(&outstanding, 1);
        return;
    }
    long n = atomic_fetch_add(&seq, 1);
    snprintf(s->path, sizeof(s->path), "/bench/h%d-%ld", s->handle, n);
    if (zoo_acreate(s->zh, s->path, "v", 1, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL,
                    on_create, s) != ZOK) {
        atomic_fetch_add(&errors, 1);
        atomic_fetch_sub(&outstanding, 1);
    }
}

static void watcher(zhandle_t *zh, int type, int state, const char *path,
                    void *ctx)
{
    (void)zh;
    (void)type;
    (void)state;
    (void)path;
    (void)ctx;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

static long arg_long(const char *s, long lo, long hi)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "zk-load: bad number %s\n", s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    static struct slot slots[MAX_HANDLES * MAX_INFLIGHT];
    zhandle_t *zh[MAX_HANDLES] = {0};
    if (argc < 4) {
        fprintf(stderr, "usage: zk-load HOST:PORT create|cycle SECONDS "
                        "[HANDLES] [INFLIGHT]\n");
        return 2;
    }
    cycle_mode = strcmp(argv[2], "cycle") == 0;
    long secs = arg_long(argv[3], 1, 3600);
    int handles = argc > 4 ? (int)arg_long(argv[4], 1, MAX_HANDLES) : 10;
    int inflight = argc > 5 ? (int)arg_long(argv[5], 1, MAX_INFLIGHT) : 5;
    zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
    for (int h = 0; h < handles; h++) {
        zh[h] = zookeeper_init(argv[1], watcher, 30000, NULL, NULL, 0);
        if (zh[h] == NULL) {
            fprintf(stderr, "zk-load: zookeeper_init failed\n");
            return 1;
        }
    }
    for (int h = 0; h < handles; h++) {
        int ok = 0;
        for (int i = 0; i < 200 && !ok; i++) {
            ok = zoo_state(zh[h]) == ZOO_CONNECTED_STATE;
            if (!ok)
                sleep_s(0.05);
        }
        if (!ok) {
            fprintf(stderr, "zk-load: session %d did not connect\n", h);
            return 1;
        }
    }
    int rc =
        zoo_create(zh[0], "/bench", "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
    if (rc != ZOK && rc != ZNODEEXISTS) {
        fprintf(stderr, "zk-load: create /bench: %s\n", zerror(rc));
        return 1;
    }
    for (int h = 0; h < handles; h++) {
        for (int i = 0; i < inflight; i++) {
            struct slot *s = &slots[h * inflight + i];
            s->zh = zh[h];
            s->handle = h;
            atomic_fetch_add(&outstanding, 1);
            issue(s);
        }
    }
    sleep_s(1.0);
    long n0 = atomic_load(&done_ops);
    double t0 = now_s();
    sleep_s((double)secs);
    long n1 = atomic_load(&done_ops);
    double t1 = now_s();
    atomic_store(&stopping, 1);
    for (int i = 0; i < 200 && atomic_load(&outstanding) > 0; i++)
        sleep_s(0.02);
    printf("ops %ld per_s %.0f errors %ld\n", n1 - n0,
           (double)(n1 - n0) / (t1 - t0), atomic_load(&errors));
    for (int h = 0; h < handles; h++)
        zookeeper_close(zh[h]);
    return 0;
}
