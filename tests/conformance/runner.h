/* SPDX-License-Identifier: MIT */
/* tn-conformance's parts: the runner state (runner.c runs the scenarios),
 * the event-stream steps (events.c), the session steps (sessions.c) and
 * the fence mode (fence.c). */
#ifndef TN_CONFORMANCE_RUNNER_H
#define TN_CONFORMANCE_RUNNER_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/client.h>
#include <tenure/session.h>

#define MAX_LEASES 32
#define LABEL_MAX 32
#define NAME_BUF 512
#define LINE_MAX_BYTES 65536

struct slot {
    char label[LABEL_MAX];
    struct tn_lease *lease;
    bool released; /* release was called on this handle */
};

/* A session handle of a scenario, with what its keepalive reported. */
struct sslot {
    char label[LABEL_MAX];
    struct tn_session *s;
    bool ended;              /* session_end was called on this handle */
    bool kept;               /* session_keepalive started */
    atomic_int calls;        /* session callbacks */
    atomic_int reason;       /* enum tn_lease_end of the last */
    atomic_int lease_calls;  /* lease callbacks */
    atomic_int lease_before; /* lease callbacks when the session's ran */
};

#define MAX_SESSIONS 8

struct events {
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    bool subscribed;
    bool stop;
    json_t *got; /* array of event objects */
    char url[2048];
    char ns[NAME_BUF]; /* the scenario's namespace: session events of
                          other owners are dropped, its own reported
                          with owner_id relative to it */
    char line[LINE_MAX_BYTES];
    size_t line_len;
};

struct runner {
    const char *url;
    struct tn_client *c;
    char prefix[96];   /* unique per run: conf-c-PID-RAND/ */
    char scenario[64]; /* current scenario */
    json_t *vars;      /* "$x" bindings */
    struct slot slots[MAX_LEASES];
    size_t n_slots;
    struct sslot sessions[MAX_SESSIONS];
    size_t n_sessions;
    struct events ev;
    char why[1024];      /* first mismatch */
    bool needs_sessions; /* the scenario's "needs" lists "sessions" */
    bool skipped;        /* ... and the server has none: skipped */
    int n_skipped;       /* scenarios skipped so far */
};

/* Milliseconds of CLOCK_MONOTONIC; sleep for ms. */
int64_t conf_now_ms(void);
void conf_sleep_ms(int64_t ms);
/* Compare actual with an expected shape, binding "$x" on first sight;
 * false with r->why set at path on a mismatch. */
bool conf_match(struct runner *r, const json_t *exp, json_t *act,
                const char *path);
/* An integer argument of step: a number or a bound "$x" (else dflt). */
int64_t conf_int_arg(struct runner *r, const json_t *step, const char *key,
                     int64_t dflt);

/* runner.c's helpers for the other parts. */
void conf_real_name(const struct runner *r, const char *sym, char *out,
                    size_t cap);
json_t *conf_err_result(int rc, bool released);
struct slot *conf_slot_of(struct runner *r, const char *label);
int conf_put_slot(struct runner *r, const char *label, struct tn_lease *l);
const char *conf_str_arg(const json_t *step, const char *key);

/* sessions.c: the session steps (NULL when op is not one of them), and
 * the end of a scenario's sessions. */
json_t *conf_session_step(struct runner *r, const char *op, const json_t *step);
void conf_sessions_reset(struct runner *r);
/* acquire under the step's "session" (a label). */
json_t *conf_session_acquire(struct runner *r, const json_t *step,
                             struct tn_acquire_args *a);

/* events_open: (re)subscribe to GET /v1/events of the run's prefix. */
json_t *conf_events_open(struct runner *r);
/* events_expect: the events seen since events_open match step's list. */
bool conf_events_expect(struct runner *r, const json_t *step);
/* Stop the event reader, if running, and forget what it read. */
void conf_events_stop(struct events *e);

/* tn-conformance --fence SINK RESOURCE TOKEN: the exit code. */
int conf_fence_main(int argc, char **argv);

#endif
