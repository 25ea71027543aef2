/* SPDX-License-Identifier: MIT */
/* Fuzz target for tenure-check: the input is a history text.  It is parsed
 * from memory and, differentially, from a stream in chunks; both readings
 * must agree.  A parsed history is checked and its report rendered; the
 * report must be consistent (witness events in range, "valid" iff no
 * count) and must serialise. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "check/check.h"
#include "check/history.h"
#include "check/history_read.h"
#include "common/assert.h"
#include "fuzz.h"

static void check_report(const struct tn_history *h)
{
    struct tn_check_report r;
    if (tn_check_run(h, &r) != 0)
        return; /* out of memory only */
    bool any = false;
    for (unsigned c = 0; c < TN_CHECK_N_CLASSES; c++) {
        const struct tn_check_witness *w = &r.witness[c];
        any = any || r.count[c] != 0;
        TN_ASSERT((r.count[c] == 0) == (w->n_ev == 0));
        for (unsigned i = 0; i < w->n_ev; i++)
            TN_ASSERT(w->ev[i].idx < (w->ev[i].sink ? h->n_sinks : h->n_ops));
    }
    TN_ASSERT(tn_check_is_clean(&r) == !any);
    json_t *j = tn_check_report_json(h, &r);
    if (j == NULL)
        return;
    TN_ASSERT(json_is_boolean(json_object_get(j, "valid")));
    char *s = json_dumps(j, JSON_COMPACT);
    TN_ASSERT(s != NULL);
    free(s);
    json_decref(j);
}

/* The stream reader must see the same history as the buffer parser. */
static void check_stream(const uint8_t *data, size_t size, int rc_buf,
                         const struct tn_history *hb)
{
    FILE *f = fmemopen((void *)(uintptr_t)data, size, "rb");
    if (f == NULL)
        return;
    struct tn_history hs;
    struct tn_errmsg em = {{0}};
    tn_history_init(&hs);
    int rc = tn_history_read_stream(&hs, f, &em);
    (void)fclose(f);
    TN_ASSERT(rc == rc_buf || rc == TN_ENOMEM || rc_buf == TN_ENOMEM);
    if (rc == 0 && rc_buf == 0) {
        TN_ASSERT(hs.n_ops == hb->n_ops);
        TN_ASSERT(hs.n_sinks == hb->n_sinks);
        TN_ASSERT(hs.n_events == hb->n_events);
    }
    tn_history_release(&hs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tn_history h;
    struct tn_errmsg em = {{0}};
    tn_history_init(&h);
    int rc = tn_history_parse(&h, (const char *)data, size, &em);
    TN_ASSERT(rc == 0 || em.text[0] != '\0' || rc == TN_ENOMEM);
    if (size > 0)
        check_stream(data, size, rc, &h);
    if (rc == 0)
        check_report(&h);
    tn_history_release(&h);
    return 0;
}
