/* SPDX-License-Identifier: MIT */
/* Server-sent event lines: see sse.h. */
#include "common/sse.h"

#include <stdio.h>
#include <string.h>

void tn_sse_init(struct tn_sse *s, size_t max_line)
{
    tn_buf_init(&s->line, max_line);
    s->last_id[0] = '\0';
}

void tn_sse_release(struct tn_sse *s)
{
    tn_buf_release(&s->line);
}

void tn_sse_feed(struct tn_sse *s, const char *p, size_t len,
                 void (*on_data)(void *arg, const char *data), void *arg)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] != '\n') {
            if (tn_buf_append(&s->line, &p[i], 1) < 0)
                tn_buf_reset(&s->line); /* over-long line: drop it */
            continue;
        }
        const char *l = s->line.data != NULL ? s->line.data : "";
        if (strncmp(l, "id: ", 4) == 0)
            (void)snprintf(s->last_id, sizeof(s->last_id), "%s", l + 4);
        else if (strncmp(l, "data: ", 6) == 0)
            on_data(arg, l + 6);
        tn_buf_reset(&s->line);
    }
}
