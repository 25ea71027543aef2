/* SPDX-License-Identifier: MIT */
/* The publisher's insides, shared by its three files: publish.c
 * (configuration, start, stop, metrics), writer.c (the event log on disk:
 * the writer on the loop thread, recovery at start, the flusher thread)
 * and sender.c (one thread per target, sending the log from its durable
 * cursor).  Not for use outside src/publish. */
#ifndef TN_PUBLISH_INTERNAL_H
#define TN_PUBLISH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "leader.h"
#include "log.h"
#include "publish.h"

#define SEGMENT_EVENTS 100000
#define BATCH_MAX 512
#define SYNC_MS 100
#define CURSOR_SAVE_MS 50
#define BACKOFF_MIN_MS 50
#define BACKOFF_MAX_MS 2000

struct target {
    struct tn_publish *p;                /* owner */
    const struct tn_pub_target_ops *ops; /* kind */
    void *impl;                          /* its state */
    char label[160];                     /* metrics label, file suffix */
    char cursor_path[1300];              /* dir/cursor-<label> */
    pthread_t thread;                    /* sender */
    bool started;                        /* thread runs */
    _Atomic uint64_t cursor;             /* last id acknowledged */
    _Atomic uint64_t published;          /* records acknowledged */
    _Atomic uint64_t resets;             /* resets decided */
    _Atomic int64_t oldest_ms;           /* at_ms of the oldest unsent, 0 */
    _Atomic bool up;                     /* the last send worked */
    bool reset_pending;                  /* a reset must go first */
    uint64_t reset_id;                   /* the last id it covers */
    uint64_t saved;                      /* cursor in the file */
    struct tn_pub_reader rd;             /* reads the log */
    struct tn_pub_record *batch;         /* BATCH_MAX records */
    struct tn_pub_record *mapped;        /* PostgreSQL: batch, ids mapped */
    uint64_t term;                       /* PostgreSQL: publisher term */
    uint64_t offset;                     /* PostgreSQL: log id -> sent id */
    uint64_t reserved;                   /* PostgreSQL: ids reserved */
};

struct tn_publish {
    char dir[1100];                  /* the log's directory */
    uint64_t backlog;                /* lag that triggers a reset */
    uint64_t segment_events;         /* records per file */
    int fd;                          /* current file (loop thread writes) */
    uint64_t seg_records;            /* records in it */
    uint64_t seg_bytes;              /* bytes in it */
    uint64_t next_id;                /* loop thread */
    bool lost;                       /* a write failed: next is a reset */
    _Atomic uint64_t head;           /* last id in the log */
    _Atomic uint64_t first_id;       /* first id the log holds */
    _Atomic uint64_t write_failures; /* failed appends */
    _Atomic int waiting;             /* target threads asleep */
    _Atomic bool stopping;           /* threads end */
    _Atomic int64_t drain_until_ms;  /* targets may finish until then */
    pthread_mutex_t mu;              /* fd handover, cv */
    pthread_cond_t cv;               /* head moved or stopping */
    int retired_fd;                  /* rolled-over file to sync and close */
    pthread_t flusher;               /* syncs and prunes */
    bool flusher_started;            /* thread runs */
    struct target targets[TN_PUBLISH_MAX_TARGETS];
    size_t n_targets;          /* count */
    bool pg;                   /* one publisher per PostgreSQL cluster */
    struct tn_pub_leader lead; /* when pg */
    int lockfd;                /* flock on dir/LOCK */
};

/* writer.c: wake the target threads waiting for the head to move. */
void tn_pub_wake_targets(struct tn_publish *p);
/* writer.c: open (and lock) the log in p->dir, recover its end; *was_clean
 * tells whether the last stop was clean.  0 or a TN_E* code. */
int tn_pub_open_log(struct tn_publish *p, bool *was_clean);
/* writer.c: the flusher thread (arg: p). */
void *tn_pub_flusher_main(void *arg);

/* sender.c: sleep until the head passes after, stop, or ms pass. */
void tn_pub_wait_for(struct tn_publish *p, uint64_t after, int64_t ms);
/* sender.c: write t's cursor c durably (tmp, fsync, rename). */
int tn_pub_save_cursor(struct target *t, uint64_t c);
/* sender.c: t's saved cursor, or head when there is none. */
uint64_t tn_pub_load_cursor(struct target *t, uint64_t head);
/* sender.c: t sends a reset covering up to head first (why is logged). */
void tn_pub_decide_reset(struct target *t, uint64_t head, const char *why);
/* sender.c: a target's thread (arg: its struct target). */
void *tn_pub_target_main(void *arg);

#endif
