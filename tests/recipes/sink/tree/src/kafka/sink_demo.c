/* SPDX-License-Identifier: MIT */
/* The demo sink, --sink demo:PATH: every decision one line of the text
 * file PATH, written when its batch commits.  Marks and next offsets live
 * in memory, so each run starts at the topic's beginning with no marks; a
 * real sink keeps them in the transaction of its rows (sink_sqlite.c). */
#include <stdio.h>

#include <tenure/fence_mem.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "kafka/sink.h"

#define DEMO_PARTITIONS 256   /* of the one topic */
#define DEMO_RESOURCES 100000 /* marks kept */

struct demo_sink {
    struct tn_sink base;           /* must be first */
    FILE *out;                     /* the decisions */
    struct tn_fence_mem *marks;    /* resource -> mark */
    struct tn_buf lines;           /* the open batch's decisions */
    int64_t next[DEMO_PARTITIONS]; /* next offset of each partition */
    bool broken;                   /* a batch failed after raising marks */
};

static int d_begin(struct tn_sink *b, struct tn_errmsg *em)
{
    struct demo_sink *s = (struct demo_sink *)b;
    if (s->broken) {
        /* marks in memory cannot be rolled back: refuse to go on */
        tn_errmsg_set(em, "demo sink: an earlier batch failed");
        return TN_EIO;
    }
    tn_buf_reset(&s->lines);
    return TN_OK;
}

static int d_advance(struct tn_sink *b, const char *resource, size_t len,
                     uint64_t token, uint64_t *hwm_before_out,
                     struct tn_errmsg *em)
{
    struct demo_sink *s = (struct demo_sink *)b;
    int rc =
        tn_fence_mem_advance(s->marks, resource, len, token, hwm_before_out);
    if (rc == TN_ETOOBIG)
        tn_errmsg_set(em, "demo sink: more than %d resources", DEMO_RESOURCES);
    return rc;
}

/* "VERB topic partition offset resource token[ reason]\n" */
static int line(struct demo_sink *s, const char *verb,
                const struct tn_sink_row *r, const char *reason)
{
    int rc = tn_buf_printf(&s->lines, "%s %s %d %lld %.*s", verb, r->topic,
                           (int)r->partition, (long long)r->offset,
                           r->resource != NULL ? (int)r->resource_len : 1,
                           r->resource != NULL ? r->resource : "-");
    if (rc == 0 && r->has_token)
        rc = tn_buf_printf(&s->lines, " %llu", (unsigned long long)r->token);
    else if (rc == 0)
        rc = tn_buf_append_str(&s->lines, " -");
    if (rc == 0 && reason != NULL)
        rc = tn_buf_printf(&s->lines, " %s", reason);
    if (rc == 0)
        rc = tn_buf_append_str(&s->lines, "\n");
    return rc;
}

static int d_admit(struct tn_sink *b, const struct tn_sink_row *r,
                   struct tn_errmsg *em)
{
    (void)em;
    return line((struct demo_sink *)b, "admitted", r, NULL);
}

static int d_reject(struct tn_sink *b, const struct tn_sink_row *r,
                    const char *reason, struct tn_errmsg *em)
{
    (void)em;
    return line((struct demo_sink *)b, "rejected", r, reason);
}

static int d_cas_offset(struct tn_sink *b, const char *topic, int32_t partition,
                        int64_t expected, int64_t next, struct tn_errmsg *em)
{
    struct demo_sink *s = (struct demo_sink *)b;
    (void)topic;
    if (s->next[partition] != expected) {
        tn_errmsg_set(em, "demo sink: partition %d moved", (int)partition);
        return TN_ECONFLICT;
    }
    s->next[partition] = next;
    return TN_OK;
}

static int d_commit(struct tn_sink *b, struct tn_errmsg *em)
{
    struct demo_sink *s = (struct demo_sink *)b;
    if (fwrite(s->lines.data, 1, s->lines.len, s->out) != s->lines.len ||
        fflush(s->out) != 0) {
        tn_errmsg_set(em, "demo sink: cannot write its file");
        s->broken = true;
        return TN_EIO;
    }
    return TN_OK;
}

static void d_rollback(struct tn_sink *b)
{
    ((struct demo_sink *)b)->broken = true;
}

static int d_load_offsets(struct tn_sink *b, const char *topic, int32_t n,
                          int64_t *next_out, struct tn_errmsg *em)
{
    struct demo_sink *s = (struct demo_sink *)b;
    (void)topic;
    if (n > DEMO_PARTITIONS) {
        tn_errmsg_set(em, "demo sink: more than %d partitions",
                      DEMO_PARTITIONS);
        return TN_EINVAL;
    }
    for (int32_t i = 0; i < n; i++)
        next_out[i] = s->next[i];
    return TN_OK;
}

static void d_close(struct tn_sink *b)
{
    struct demo_sink *s = (struct demo_sink *)b;
    (void)fclose(s->out);
    tn_fence_mem_free(s->marks);
    tn_buf_release(&s->lines);
    tn_free(s);
}

static const struct tn_sink_ops demo_ops = {
    .begin = d_begin,
    .advance = d_advance,
    .admit = d_admit,
    .reject = d_reject,
    .cas_offset = d_cas_offset,
    .commit = d_commit,
    .rollback = d_rollback,
    .load_offsets = d_load_offsets,
    .close = d_close,
};

/* Its line in sinks.def declares it; arg is PATH (the prefix stripped). */
int tn_sink_demo_open(const char *arg, struct tn_sink **out,
                      struct tn_errmsg *em)
{
    struct demo_sink *s = tn_calloc(1, sizeof(*s));
    if (s == NULL)
        return TN_ENOMEM;
    s->base.ops = &demo_ops;
    tn_buf_init(&s->lines, SIZE_MAX);
    s->marks = tn_fence_mem_new(DEMO_RESOURCES);
    s->out = fopen(arg, "w");
    if (s->marks == NULL || s->out == NULL) {
        tn_errmsg_set(em, "demo sink: cannot open %s", arg);
        if (s->out != NULL)
            (void)fclose(s->out);
        tn_fence_mem_free(s->marks);
        tn_free(s);
        return TN_EIO;
    }
    *out = &s->base;
    return TN_OK;
}
