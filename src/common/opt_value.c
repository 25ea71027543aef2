/* SPDX-License-Identifier: MIT */
/* The values of options (opt_value.h): one setter per type, each taking exactly
 * what its type documents and refusing the rest with one line, "SUBJECT:
 * expected ..., got 'VALUE'".  A setter writes its field only when the
 * whole value is good. */
#include "common/opt_value.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/assert.h"

static int set_bool(void *f, const struct tn_opt *o, const char *v,
                    const char *subject, struct tn_errmsg *em)
{
    bool b = strcmp(v, "true") == 0 || strcmp(v, "1") == 0;
    if (!b && strcmp(v, "false") != 0 && strcmp(v, "0") != 0) {
        tn_errmsg_set(em, "%s: expected true or false, got '%.64s'", subject,
                      v);
        return TN_EINVAL;
    }
    TN_ASSERT(o->size == sizeof(b));
    memcpy(f, &b, sizeof(b));
    return TN_OK;
}

static int set_text(void *f, const struct tn_opt *o, const char *v,
                    const char *subject, struct tn_errmsg *em)
{
    size_t n = strlen(v);
    if (n >= o->size) {
        tn_errmsg_set(em, "%s: too long (at most %zu bytes)", subject,
                      o->size - 1);
        return TN_EINVAL;
    }
    memcpy(f, v, n + 1);
    return TN_OK;
}

/* "a|b|c" as "a, b or c" into out. */
static void choices_text(const char *choices, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (const char *c = choices; c != NULL && n < cap;) {
        const char *bar = strchr(c, '|');
        int len = bar != NULL ? (int)(bar - c) : (int)strlen(c);
        const char *sep = c == choices ? "" : bar != NULL ? ", " : " or ";
        int w = snprintf(out + n, cap - n, "%s%.*s", sep, len, c);
        n += w > 0 ? (size_t)w : 0;
        c = bar != NULL ? bar + 1 : NULL;
    }
}

static int set_choice(void *f, const struct tn_opt *o, const char *v,
                      const char *subject, struct tn_errmsg *em)
{
    size_t n = strlen(v);
    for (const char *c = o->choices; c != NULL;) {
        const char *bar = strchr(c, '|');
        size_t len = bar != NULL ? (size_t)(bar - c) : strlen(c);
        if (len == n && strncmp(c, v, n) == 0)
            return set_text(f, o, v, subject, em);
        c = bar != NULL ? bar + 1 : NULL;
    }
    char list[160];
    choices_text(o->choices, list, sizeof(list));
    tn_errmsg_set(em, "%s: expected %s, got '%.64s'", subject, list, v);
    return TN_EINVAL;
}

static int set_list(void *f, const struct tn_opt *o, const char *v,
                    const char *subject, struct tn_errmsg *em)
{
    char *s = f;
    size_t used = strlen(s);
    size_t n = strlen(v);
    if (n == 0) {
        s[0] = '\0';
        return TN_OK;
    }
    if (strchr(v, '\n') != NULL) {
        tn_errmsg_set(em, "%s: a value may not hold a line break", subject);
        return TN_EINVAL;
    }
    if (used + n + 2 > o->size) {
        tn_errmsg_set(em,
                      "%s: too long or repeated too often (the values and a "
                      "line break after each: at most %zu bytes)",
                      subject, o->size - 1);
        return TN_EINVAL;
    }
    memcpy(s + used, v, n);
    memcpy(s + used + n, "\n", 2);
    return TN_OK;
}

static int set_int(void *f, const struct tn_opt *o, const char *v,
                   const char *subject, struct tn_errmsg *em)
{
    char *end = NULL;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < o->min || n > o->max) {
        tn_errmsg_set(em,
                      "%s: expected an integer in [%lld, %lld], got '%.64s'",
                      subject, (long long)o->min, (long long)o->max, v);
        return TN_EINVAL;
    }
    if (o->size == sizeof(int32_t)) {
        TN_ASSERT(o->min >= INT32_MIN && o->max <= INT32_MAX);
        int32_t i = (int32_t)n;
        memcpy(f, &i, sizeof(i));
    } else {
        TN_ASSERT(o->size == sizeof(int64_t));
        int64_t i = n;
        memcpy(f, &i, sizeof(i));
    }
    return TN_OK;
}

int tn_opt_parse_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return TN_EINVAL;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return TN_EINVAL;
    *out = (uint64_t)v;
    return TN_OK;
}

static int set_u64(void *f, const struct tn_opt *o, const char *v,
                   const char *subject, struct tn_errmsg *em)
{
    uint64_t u = 0;
    if (tn_opt_parse_u64(v, &u) < 0) {
        tn_errmsg_set(em, "%s: expected a non-negative integer, got '%.64s'",
                      subject, v);
        return TN_EINVAL;
    }
    TN_ASSERT(o->size == sizeof(u));
    memcpy(f, &u, sizeof(u));
    return TN_OK;
}

enum duration { DUR_OK, DUR_BAD, DUR_NO_UNIT };

/* Digits then ms, s, m or h; "0" alone is 0 of any unit, while any other
 * number without a unit is DUR_NO_UNIT: 10 what?  The CLI does not guess. */
static enum duration parse_duration(const char *s, int64_t *out_ms)
{
    static const struct {
        const char *suffix; /* as typed */
        int64_t ms;         /* milliseconds per unit */
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}};
    if (*s < '0' || *s > '9')
        return DUR_BAD;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno != 0)
        return DUR_BAD;
    if (*end == '\0') {
        *out_ms = 0;
        return v == 0 ? DUR_OK : DUR_NO_UNIT;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].suffix) != 0)
            continue;
        if (v > INT64_MAX / units[i].ms)
            return DUR_BAD;
        *out_ms = (int64_t)v * units[i].ms;
        return DUR_OK;
    }
    return DUR_BAD;
}

static int set_duration(void *f, const struct tn_opt *o, const char *v,
                        const char *subject, struct tn_errmsg *em)
{
    int64_t ms = 0;
    enum duration d = parse_duration(v, &ms);
    if (d == DUR_NO_UNIT)
        tn_errmsg_set(em,
                      "%s: expected a duration with a unit (ms, s, m or h), "
                      "got '%.32s' (e.g. %.32ss)",
                      subject, v, v);
    else if (d == DUR_BAD)
        tn_errmsg_set(em,
                      "%s: expected a duration such as 500ms, 10s, 2m or 1h, "
                      "got '%.64s'",
                      subject, v);
    else if (ms < o->min && o->min == 1)
        tn_errmsg_set(em,
                      "%s: expected a duration more than 0, got '%.64s' (e.g. "
                      "10s)",
                      subject, v);
    else if (ms < o->min)
        tn_errmsg_set(em,
                      "%s: expected a duration of at least %lld ms, got "
                      "'%.64s'",
                      subject, (long long)o->min, v);
    if (d != DUR_OK || ms < o->min)
        return TN_EINVAL;
    TN_ASSERT(o->size == sizeof(ms));
    memcpy(f, &ms, sizeof(ms));
    return TN_OK;
}

int tn_opt_set(const struct tn_opt_table *t, const struct tn_opt *o,
               const char *v, const char *subject, struct tn_errmsg *em)
{
    void *f = (char *)t->base + o->offset;
    if ((o->flags & TN_OPT_NONEMPTY) != 0 && v[0] == '\0') {
        tn_errmsg_set(em, "%s: must not be empty", subject);
        return TN_EINVAL;
    }
    switch (o->type) {
    case TN_OPT_BOOL:
        return set_bool(f, o, v, subject, em);
    case TN_OPT_STR:
        TN_ASSERT(o->size == sizeof(v));
        memcpy(f, &v, sizeof(v));
        return TN_OK;
    case TN_OPT_TEXT:
        return set_text(f, o, v, subject, em);
    case TN_OPT_CHOICE:
        return set_choice(f, o, v, subject, em);
    case TN_OPT_LIST:
        return set_list(f, o, v, subject, em);
    case TN_OPT_INT:
        return set_int(f, o, v, subject, em);
    case TN_OPT_U64:
        return set_u64(f, o, v, subject, em);
    case TN_OPT_DURATION:
        return set_duration(f, o, v, subject, em);
    case TN_OPT_ACTION:
    case TN_OPT_REFUSED:
        break;
    }
    TN_ASSERT(!"a row without a value was set");
    return TN_EINVAL;
}
