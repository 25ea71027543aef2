/* SPDX-License-Identifier: MIT */
/* Test helpers for the checker: build a history text line by line with
 * times in milliseconds (converted to ns), then parse and check it. */
#ifndef TN_TEST_CHECK_HIST_H
#define TN_TEST_CHECK_HIST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check/check.h"
#include "check/history.h"
#include "check/history_read.h"

#include <cmocka.h>

#define MS 1000000LL
#define NONE (-1LL)

struct hb {
    char text[65536]; /* the history, NUL-terminated */
    size_t len;       /* bytes used */
};

static inline void hb_add(struct hb *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static inline void hb_add(struct hb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->text + b->len, sizeof(b->text) - b->len, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof(b->text) - b->len)
        b->len += (size_t)n;
}

/* An acquire invoke at t_ms. */
static inline void acq(struct hb *b, long long t_ms, const char *proc,
                       const char *name, long long ttl_ms)
{
    hb_add(b,
           "{\"t\":%lld,\"proc\":\"%s\",\"op\":\"acquire\",\"phase\":"
           "\"invoke\",\"name\":\"%s\",\"ttl_ms\":%lld}\n",
           t_ms * MS, proc, name, ttl_ms);
}

/* A renew (ttl_ms may be NONE) or release invoke. */
static inline void inv(struct hb *b, long long t_ms, const char *proc,
                       const char *op, const char *name, long long token,
                       long long ttl_ms)
{
    hb_add(b,
           "{\"t\":%lld,\"proc\":\"%s\",\"op\":\"%s\",\"phase\":\"invoke\","
           "\"name\":\"%s\",\"token\":%lld",
           t_ms * MS, proc, op, name, token);
    if (ttl_ms != NONE)
        hb_add(b, ",\"ttl_ms\":%lld", ttl_ms);
    hb_add(b, "}\n");
}

/* A completion (token may be NONE). */
static inline void done(struct hb *b, long long t_ms, const char *proc,
                        const char *op, const char *phase, long long token)
{
    hb_add(b, "{\"t\":%lld,\"proc\":\"%s\",\"op\":\"%s\",\"phase\":\"%s\"",
           t_ms * MS, proc, op, phase);
    if (token != NONE)
        hb_add(b, ",\"token\":%lld", token);
    hb_add(b, "}\n");
}

/* A sink decision (hwm may be NONE). */
static inline void sink(struct hb *b, long long t_ms, const char *res,
                        long long token, bool admit, long long hwm)
{
    hb_add(b,
           "{\"t\":%lld,\"src\":\"sink\",\"resource\":\"%s\",\"token\":%lld,"
           "\"decision\":\"%s\"",
           t_ms * MS, res, token, admit ? "admit" : "reject");
    if (hwm != NONE)
        hb_add(b, ",\"hwm_before\":%lld", hwm);
    hb_add(b, "}\n");
}

/* A whole ok acquire: invoke at i_ms, ok at c_ms with token. */
static inline void grant(struct hb *b, long long i_ms, long long c_ms,
                         const char *proc, const char *name, long long ttl_ms,
                         long long token)
{
    acq(b, i_ms, proc, name, ttl_ms);
    done(b, c_ms, proc, "acquire", "ok", token);
}

/* The report of checking b's history (which must parse), parsed into h
 * for the caller to look at further and release. */
static inline struct tn_check_report check_parsed(const struct hb *b,
                                                  struct tn_history *h)
{
    struct tn_check_report r;
    struct tn_errmsg em = {{0}};
    tn_history_init(h);
    int rc = tn_history_parse(h, b->text, b->len, &em);
    if (rc != 0)
        print_error("parse: %s\n%s", em.text, b->text);
    assert_int_equal(rc, 0);
    assert_int_equal(tn_check_run(h, &r), 0);
    return r;
}

/* The report of checking b's history (which must parse). */
static inline struct tn_check_report check_text(const struct hb *b)
{
    struct tn_history h;
    struct tn_check_report r = check_parsed(b, &h);
    tn_history_release(&h);
    return r;
}

static inline void assert_clean(const struct hb *b)
{
    struct tn_check_report r = check_text(b);
    for (unsigned i = 0; i < TN_CHECK_N_CLASSES; i++) {
        if (r.count[i] != 0)
            print_error("unexpected %s\n", tn_check_class_name(i));
        assert_int_equal(r.count[i], 0);
    }
    assert_true(tn_check_is_clean(&r));
}

/* Exactly count violations of cls and none of any other class. */
static inline struct tn_check_report assert_only(const struct hb *b,
                                                 unsigned cls, size_t count)
{
    struct tn_check_report r = check_text(b);
    for (unsigned i = 0; i < TN_CHECK_N_CLASSES; i++) {
        size_t want = i == cls ? count : 0;
        if (r.count[i] != want)
            print_error("%s: %zu, want %zu\n", tn_check_class_name(i),
                        r.count[i], want);
        assert_int_equal(r.count[i], want);
    }
    assert_false(tn_check_is_clean(&r));
    assert_true(r.witness[cls].n_ev > 0);
    return r;
}

#endif
