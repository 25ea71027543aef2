/* SPDX-License-Identifier: MIT */
/* The materializer's sinks, one line each in sinks.def: a new sink is one
 * file, sink_NAME.c, with its tn_sink_ops and an open function, plus its
 * line there (docs/CONTRIBUTING.md). */
#include <stdio.h>
#include <string.h>

#include "kafka/sink.h"

/* A --sink spelling; open gets the spec after the prefix when strip is
 * set, else all of it. */
struct sink_kind {
    const char *prefix; /* e.g. "sqlite:" */
    bool strip;         /* open gets spec + strlen(prefix) */
    const char *hint;   /* how to write it, for errors; NULL: an alias */
    int (*open)(const char *arg, struct tn_sink **out, struct tn_errmsg *em);
};

#define TN_SINK(name, prefix, strip, hint)                                     \
    {prefix, strip, hint, tn_sink_##name##_open},
static const struct sink_kind sinks[] = {
#include "kafka/sinks.def"
};
#undef TN_SINK

#define N_SINKS (sizeof(sinks) / sizeof(sinks[0]))

void tn_sink_spellings(char *out, size_t cap)
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
        const struct sink_kind *k = &sinks[i];
        size_t plen = strlen(k->prefix);
        if (strncmp(spec, k->prefix, plen) != 0)
            continue;
        if (k->strip && spec[plen] == '\0')
            break; /* "sqlite:" without a path */
        return k->open(k->strip ? spec + plen : spec, out, em);
    }
    char known[128];
    tn_sink_spellings(known, sizeof(known));
    tn_errmsg_set(em, "unknown sink \"%s\" (%s)", spec, known);
    return TN_EINVAL;
}
