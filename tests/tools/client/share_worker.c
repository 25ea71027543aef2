/* SPDX-License-Identifier: MIT */
/* tn-share-worker: one worker of the fair-share recipe for the tests.
 *   tn-share-worker URL GROUP WORKER SHARDS TTL_MS SINK [--no-fence]
 * Joins GROUP with the shards GROUP:shard:000 .. SHARDS-1 (tn_share_*),
 * and every 200 ms writes one row per shard it holds into the SQLite file
 * SINK, through the fence (tenure_fence) with the shard's token, all in
 * one transaction, checking tn_lease_is_held right before.  Prints one
 * line per change, line-buffered:
 *   gained NAME token=T | lost NAME token=T why=W | count=N
 *   wrote NAME token=T | stale NAME token=T (the fence refused it)
 * SIGUSR1 makes it stop itself (SIGSTOP) between two writes, so that it
 * never freezes inside a transaction of the shared sink (which would
 * stall every other writer's: a property of one SQLite file, not of the
 * fence).  Resumed (SIGCONT), it first writes once more every shard of its
 * last round without checking anything, as a write that was under way
 * when the process froze would land: "zombie NAME token=T", then wrote or
 * stale.  Those writes also go, unfenced, into plain_writes: the
 * negative control of what would land without the fence.  --no-fence
 * writes without the fence (to see the test go red).  SIGTERM leaves the
 * group (tn_share_stop) and exits 0.  A test helper only. */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tenure/client.h>
#include <tenure/fence_sqlite.h>
#include <tenure/share.h>

#define MAX_SHARDS 2000

struct held {
    char name[128];     /* shard */
    uint64_t token;     /* its grant */
    struct tn_lease *l; /* the lease (valid until lost returns) */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct held held[MAX_SHARDS]; /* under mu; l == NULL: free slot */
static struct held last[MAX_SHARDS]; /* the writer's last round */
static size_t n_last;
static atomic_bool resumed;
static atomic_bool freeze;
static atomic_bool quit;
static bool no_fence;
static const char *worker;

static void on_cont(int sig)
{
    (void)sig;
    atomic_store(&resumed, true);
}

static void on_usr1(int sig)
{
    (void)sig;
    atomic_store(&freeze, true);
}

static void on_term(int sig)
{
    (void)sig;
    atomic_store(&quit, true);
}

static void say_count(void)
{
    size_t n = 0;
    for (size_t i = 0; i < MAX_SHARDS; i++)
        n += held[i].l != NULL;
    printf("count=%zu\n", n);
}

static void on_gained(struct tn_share *sh, struct tn_lease *const *l, size_t n,
                      void *ud)
{
    (void)sh, (void)ud;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < MAX_SHARDS; k++) {
            if (held[k].l != NULL)
                continue;
            snprintf(held[k].name, sizeof(held[k].name), "%s",
                     tn_lease_name(l[i]));
            held[k].token = tn_lease_token(l[i]);
            held[k].l = l[i];
            break;
        }
        printf("gained %s token=%" PRIu64 "\n", tn_lease_name(l[i]),
               tn_lease_token(l[i]));
    }
    say_count();
    pthread_mutex_unlock(&mu);
}

static void on_lost(struct tn_share *sh, struct tn_lease *const *l, size_t n,
                    enum tn_lease_end why, void *ud)
{
    (void)sh, (void)ud;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < MAX_SHARDS; k++) {
            if (held[k].l == l[i])
                held[k].l = NULL;
        }
        printf("lost %s token=%" PRIu64 " why=%s\n", tn_lease_name(l[i]),
               tn_lease_token(l[i]), tn_lease_end_name(why));
    }
    say_count();
    pthread_mutex_unlock(&mu);
}

static int exec(sqlite3 *db, const char *sql)
{
    return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* One write of (name, token) inside the round's transaction: through the
 * fence (or not), and, for a zombie write, also into plain_writes.  Prints
 * wrote or stale. */
static void write_one(sqlite3 *db, const struct held *h, bool zombie)
{
    char sql[512];
    int rc = 0;
    if (!no_fence)
        rc = tn_fence_sqlite_advance(db, h->name, strlen(h->name), h->token,
                                     NULL, NULL);
    if (rc == 0) {
        sqlite3_snprintf(sizeof(sql), sql,
                         "INSERT INTO writes(shard, token, worker, zombie) "
                         "VALUES(%Q, %lld, %Q, %d)",
                         h->name, (long long)h->token, worker, zombie);
        rc = exec(db, sql);
    }
    if (zombie) {
        sqlite3_snprintf(sizeof(sql), sql,
                         "INSERT INTO plain_writes(shard, token, worker) "
                         "VALUES(%Q, %lld, %Q)",
                         h->name, (long long)h->token, worker);
        (void)exec(db, sql);
    }
    printf("%s %s token=%" PRIu64 "\n", rc == 0 ? "wrote" : "stale", h->name,
           h->token);
}

/* The writes of a[0..n) in one transaction of the sink (each shard
 * fenced on its own: a stale one is refused, the others land). */
static void write_all(sqlite3 *db, const struct held *a, size_t n, bool zombie)
{
    if (n == 0 || exec(db, "BEGIN IMMEDIATE") < 0)
        return;
    for (size_t i = 0; i < n; i++) {
        if (zombie)
            printf("zombie %s token=%" PRIu64 "\n", a[i].name, a[i].token);
        write_one(db, &a[i], zombie);
    }
    if (exec(db, "COMMIT") < 0)
        (void)exec(db, "ROLLBACK");
}

/* A normal round: every shard held, checked right before the round. */
static void write_round(sqlite3 *db)
{
    pthread_mutex_lock(&mu);
    n_last = 0;
    for (size_t k = 0; k < MAX_SHARDS; k++) {
        if (held[k].l != NULL && tn_lease_is_held(held[k].l))
            last[n_last++] = held[k];
    }
    pthread_mutex_unlock(&mu);
    write_all(db, last, n_last, false);
}

/* Resumed after a freeze: the writes that were under way land now. */
static void zombie_round(sqlite3 *db)
{
    write_all(db, last, n_last, true);
}

static sqlite3 *open_sink(const char *path)
{
    sqlite3 *db = NULL;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return NULL;
    (void)sqlite3_busy_timeout(db, 10000);
    /* Many small transactions from several workers: the WAL without a
     * sync per commit (the sink's durability is not what is tested). */
    if (exec(db, "PRAGMA journal_mode=WAL") < 0 ||
        exec(db, "PRAGMA synchronous=NORMAL") < 0 ||
        exec(db, "CREATE TABLE IF NOT EXISTS writes(shard TEXT, token "
                 "INTEGER, worker TEXT, zombie INTEGER)") < 0 ||
        exec(db, "CREATE TABLE IF NOT EXISTS plain_writes(shard TEXT, "
                 "token INTEGER, worker TEXT)") < 0 ||
        tn_fence_sqlite_migrate(db, NULL) < 0) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static struct tn_share *join(struct tn_client *c, char **argv,
                             char (*names)[128], const char **ptrs)
{
    size_t n = strtoul(argv[4], NULL, 10);
    for (size_t i = 0; i < n && i < MAX_SHARDS; i++) {
        snprintf(names[i], 128, "%s:shard:%03zu", argv[2], i);
        ptrs[i] = names[i];
    }
    struct tn_share_options o;
    tn_share_options_init(&o);
    o.group = argv[2];
    o.worker = argv[3];
    o.shards = ptrs;
    o.n_shards = n < MAX_SHARDS ? n : MAX_SHARDS;
    o.ttl_ms = strtoll(argv[5], NULL, 10);
    o.rebalance_ms = 500;
    o.gained = on_gained;
    o.lost = on_lost;
    struct tn_share *sh = NULL;
    struct tn_errmsg em = {{0}};
    if (tn_share_start(c, &o, &sh, &em) < 0)
        fprintf(stderr, "share: %s\n", em.text);
    return sh;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: tn-share-worker URL GROUP WORKER SHARDS "
                        "TTL_MS SINK [--no-fence]\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    worker = argv[3];
    no_fence = argc > 7 && strcmp(argv[7], "--no-fence") == 0;
    struct sigaction sa = {.sa_handler = on_cont};
    sigaction(SIGCONT, &sa, NULL);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sqlite3 *db = open_sink(argv[6]);
    struct tn_client_options o;
    tn_client_options_init(&o);
    o.urls[0] = argv[1];
    o.n_urls = 1;
    struct tn_client *c = NULL;
    static char names[MAX_SHARDS][128];
    static const char *ptrs[MAX_SHARDS];
    if (db == NULL || tn_client_new(&o, &c, NULL) < 0)
        return 2;
    struct tn_share *sh = join(c, argv, names, ptrs);
    if (sh == NULL)
        return 2;
    while (!atomic_load(&quit)) {
        if (atomic_exchange(&freeze, false)) {
            printf("frozen\n");
            atomic_store(&resumed, false);
            raise(SIGSTOP); /* every thread, until SIGCONT */
        }
        if (atomic_exchange(&resumed, false))
            zombie_round(db);
        write_round(db);
        struct timespec ts = {0, 200 * 1000000L};
        nanosleep(&ts, NULL);
    }
    tn_share_stop(sh);
    tn_client_free(c);
    sqlite3_close(db);
    return 0;
}
