/* SPDX-License-Identifier: MIT */
/* worker: hold the lease NAME while doing STEPS units of work, stamping
 * every write with the lease's fencing token, and stop at once when the
 * lease is lost.  Usage: worker NAME TTL_MS STEPS SINK_FILE
 * (server from $TENURE_SERVER, default http://127.0.0.1:7300). */
#define _POSIX_C_SOURCE 200809L /* nanosleep under -std=c17 */

#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <tenure/client.h>

static atomic_bool lease_ended; /* set by the keepalive callback */

/* Runs once, on the client's keepalive thread, when the lease ends. */
static void on_lease_end(struct tn_lease *l, enum tn_lease_end why, int rc,
                         void *ud)
{
    (void)ud;
    fprintf(stderr, "worker: lease %s ended: %s (%s)\n", tn_lease_name(l),
            tn_lease_end_name(why), tn_strerror(rc));
    atomic_store(&lease_ended, true);
}

/* One write to the data store, stamped with the fencing token.  A real
 * store admits it only if token >= the highest token it has seen for
 * this resource, in the same transaction as the write (see the fence kit
 * in <tenure/fence.h>); that is what stops a paused, stale worker. */
static int write_record(FILE *sink, uint64_t token, int step)
{
    if (fprintf(sink, "token=%" PRIu64 " step=%d\n", token, step) < 0)
        return -1;
    return fflush(sink);
}

static void do_some_work(void)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static int work(struct tn_lease *lease, int steps, FILE *sink)
{
    for (int step = 0; step < steps; step++) {
        do_some_work();
        /* Check right before each write: the lease may have been lost, or
         * its safe time may have run out while the network was down. */
        if (atomic_load(&lease_ended) || !tn_lease_is_held(lease)) {
            fprintf(stderr, "worker: lease lost, stopping at step %d\n", step);
            return 4;
        }
        if (write_record(sink, tn_lease_token(lease), step) < 0)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: worker NAME TTL_MS STEPS SINK_FILE\n");
        return 2;
    }
    const char *server = getenv("TENURE_SERVER");
    struct tn_client_options opts;
    tn_client_options_init(&opts);
    opts.urls[0] = server != NULL ? server : "http://127.0.0.1:7300";
    opts.n_urls = 1;
    opts.owner_id = "worker-example";

    struct tn_errmsg em = {{0}};
    struct tn_client *client = NULL;
    int rc = tn_client_new(&opts, &client, &em);
    if (rc < 0) {
        fprintf(stderr, "worker: %s: %s\n", tn_strerror(rc), em.text);
        return 1;
    }

    struct tn_acquire_args args = {
        .name = argv[1],
        .ttl_ms = strtoll(argv[2], NULL, 10),
    };
    struct tn_lease *lease = NULL;
    struct tn_lease_info holder;
    rc = tn_client_acquire(client, &args, &lease, &holder, &em);
    if (rc == TN_ECONFLICT) {
        fprintf(stderr, "worker: %s is held by %s (token %" PRIu64 ")\n",
                argv[1], holder.owner_id, holder.token);
        tn_client_free(client);
        return 3;
    }
    if (rc < 0) {
        fprintf(stderr, "worker: acquire: %s: %s\n", tn_strerror(rc), em.text);
        tn_client_free(client);
        return 1;
    }
    printf("worker: holding %s with token %" PRIu64 "\n", argv[1],
           tn_lease_token(lease));

    rc = tn_client_keepalive_start(client, lease, on_lease_end, NULL);
    FILE *sink = rc == 0 ? fopen(argv[4], "a") : NULL;
    int status =
        sink != NULL ? work(lease, (int)strtol(argv[3], NULL, 10), sink) : 1;
    if (sink != NULL)
        fclose(sink);

    /* Give the lease back if we still hold it; this also ends the
     * keepalive (the callback runs with "released"). */
    if (status != 4)
        (void)tn_client_release(client, lease, &em);
    tn_lease_free(lease);
    tn_client_free(client);
    return status;
}
