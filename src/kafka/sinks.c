/* SPDX-License-Identifier: MIT */
/* The materializer's sinks, one line each: a new sink is one file with
 * its tn_sink_ops and an open function, plus a line here
 * (docs/CONTRIBUTING.md). */
#include <stdio.h>
#include <string.h>

#include "kafka/sink.h"

static const struct tn_sink_kind sinks[] = {
    {"sqlite:", true, "sqlite:PATH", tn_sink_sqlite_open},
    {"postgresql://", false, "postgresql://...", tn_sink_pg_open},
    {"postgres://", false, NULL, tn_sink_pg_open},
};

#define N_SINKS (sizeof(sinks) / sizeof(sinks[0]))

/* "a or b or c" of the hints, for the error. */
static void hints(char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < N_SINKS && n < cap; i++) {
        if (sinks[i].hint == NULL)
            continue;
        int w = snprintf(out + n, cap - n, "%s%s", n > 0 ? " or " : "",
                         sinks[i].hint);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

int tn_sink_open(const char *spec, struct tn_sink **out, struct tn_errmsg *em)
{
    for (size_t i = 0; i < N_SINKS; i++) {
        const struct tn_sink_kind *k = &sinks[i];
        size_t plen = strlen(k->prefix);
        if (strncmp(spec, k->prefix, plen) != 0)
            continue;
        if (k->strip && spec[plen] == '\0')
            break; /* "sqlite:" without a path */
        return k->open(k->strip ? spec + plen : spec, out, em);
    }
    char known[128];
    hints(known, sizeof(known));
    tn_errmsg_set(em, "unknown sink \"%s\" (%s)", spec, known);
    return TN_EINVAL;
}
