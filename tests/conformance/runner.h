/* SPDX-License-Identifier: MIT */
/* tn-conformance's parts: the runner state (runner.c runs the scenarios),
 * the event-stream steps (events.c) and the fence mode (fence.c). */
#ifndef TN_CONFORMANCE_RUNNER_H
#define TN_CONFORMANCE_RUNNER_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/client.h>

#define MAX_LEASES 32
#define LABEL_MAX 32
#define NAME_BUF 512
#define LINE_MAX_BYTES 65536

struct slot {
    char label[LABEL_MAX];
    struct tn_lease *lease;
    bool released; /* release was called on this handle */
};

struct events {
    pthread_t thread;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    bool subscribed;
    bool stop;
    json_t *got; /* array of event objects */
    char url[2048];
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
    struct events ev;
    char why[1024]; /* first mismatch */
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

/* events_open: (re)subscribe to GET /v1/events of the run's prefix. */
json_t *conf_events_open(struct runner *r);
/* events_expect: the events seen since events_open match step's list. */
bool conf_events_expect(struct runner *r, const json_t *step);
/* Stop the event reader, if running, and forget what it read. */
void conf_events_stop(struct events *e);

/* tn-conformance --fence SINK RESOURCE TOKEN: the exit code. */
int conf_fence_main(int argc, char **argv);

#endif
