/* SPDX-License-Identifier: MIT */
/* tn-hammer verify: the token contract over one grant file.  Every token is
 * above --floor-token, no token repeats, and a grant acknowledged before
 * another grant's request was sent has the lower token.  Prints
 * "max_token N": the highest token granted or revealed by a 409 ("seen"
 * lines), or the floor when there is none. */
#include <stdio.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "hammer.h"

static int by_token(const void *a, const void *b)
{
    const struct hm_grant *x = *(const struct hm_grant *const *)a;
    const struct hm_grant *y = *(const struct hm_grant *const *)b;
    return (x->token > y->token) - (x->token < y->token);
}

static int by_ack(const void *a, const void *b)
{
    const struct hm_grant *x = *(const struct hm_grant *const *)a;
    const struct hm_grant *y = *(const struct hm_grant *const *)b;
    return (x->ack_ms > y->ack_ms) - (x->ack_ms < y->ack_ms);
}

static int by_send(const void *a, const void *b)
{
    const struct hm_grant *x = *(const struct hm_grant *const *)a;
    const struct hm_grant *y = *(const struct hm_grant *const *)b;
    return (x->send_ms > y->send_ms) - (x->send_ms < y->send_ms);
}

static long check_unique(const struct hm_grant **p, size_t n, long long floor)
{
    long bad = 0;
    qsort(p, n, sizeof(const struct hm_grant *), by_token);
    for (size_t i = 0; i < n; i++) {
        if (p[i]->token <= floor && bad++ < 10)
            (void)printf("VIOLATION token_not_above_floor name=%s token=%lld "
                         "floor=%lld\n",
                         p[i]->name, p[i]->token, floor);
        if (i > 0 && p[i]->token == p[i - 1]->token && bad++ < 10)
            (void)printf("VIOLATION duplicate_token token=%lld names=%s,%s\n",
                         p[i]->token, p[i - 1]->name, p[i]->name);
    }
    return bad;
}

/* Sweep grants by send time, tracking the highest token acknowledged
 * strictly before each send. */
static long check_real_time(const struct hm_grant **by_a,
                            const struct hm_grant **by_s, size_t n)
{
    long bad = 0;
    size_t j = 0;
    const struct hm_grant *top = NULL;
    qsort(by_a, n, sizeof(const struct hm_grant *), by_ack);
    qsort(by_s, n, sizeof(const struct hm_grant *), by_send);
    for (size_t i = 0; i < n; i++) {
        while (j < n && by_a[j]->ack_ms < by_s[i]->send_ms) {
            if (top == NULL || by_a[j]->token > top->token)
                top = by_a[j];
            j++;
        }
        if (top != NULL && top->token >= by_s[i]->token && bad++ < 10)
            (void)printf("VIOLATION real_time_order earlier=%s:%lld@ack%lld "
                         "later=%s:%lld@send%lld\n",
                         top->name, top->token, top->ack_ms, by_s[i]->name,
                         by_s[i]->token, by_s[i]->send_ms);
    }
    return bad;
}

int hm_verify(const struct hm_opts *o)
{
    struct hm_grant *g = NULL;
    size_t n = 0;
    long long kill_after = -1;
    long long max = o->floor_token;
    long long max_seen = 0;
    if (o->grants_path == NULL ||
        hm_read_grants(o->grants_path, &g, &n, &kill_after, &max_seen) < 0) {
        (void)fputs("tn-hammer verify: need a readable --grants\n", stderr);
        return 2;
    }
    const struct hm_grant **p1 =
        tn_calloc(n + 1, sizeof(const struct hm_grant *));
    const struct hm_grant **p2 =
        tn_calloc(n + 1, sizeof(const struct hm_grant *));
    long bad = 0;
    if (p1 == NULL || p2 == NULL) {
        bad = 1;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        p1[i] = p2[i] = &g[i];
        max = g[i].token > max ? g[i].token : max;
    }
    bad = check_unique(p1, n, o->floor_token);
    bad += check_real_time(p1, p2, n);
    /* A 409 may reveal a grant of an earlier run that is still live, so
     * seen tokens only raise the maximum. */
    max = max_seen > max ? max_seen : max;
    (void)printf("grants %zu\nmax_token %lld\n", n, max);
out:
    tn_free(p1);
    tn_free(p2);
    tn_free(g);
    return bad > 0 ? 1 : 0;
}
