/* SPDX-License-Identifier: MIT */
/* GET /v1/leases/{name}/history: the last grants of a name, newest first,
 * with how each ended.  Only stores that keep a grant history serve it. */
#include <tenure/err.h>

#include "api_int.h"
#include "reply.h"
#include "store/names.h"

bool tn_api_history_is_on(const struct tn_api *api)
{
    return api->cfg.store->backend->caps.history;
}

static void historied(void *arg)
{
    struct tn_api_call *c = arg;
    const struct tn_store_result *r = &c->result;
    struct tn_buf b;
    if (!tn_api_result_begin(c, &b))
        return;
    tn_reply_kv_str(&b, "name", c->route.name, true);
    tn_reply_key(&b, "grants", false);
    (void)tn_buf_append(&b, "[", 1);
    for (size_t i = 0; i < r->n_history; i++) {
        const struct tn_grant_record *g = &r->history[i];
        (void)tn_buf_append(&b, i == 0 ? "{" : ",{", i == 0 ? 1 : 2);
        tn_reply_kv_uint(&b, "token", g->token, true);
        tn_reply_kv_str(&b, "owner_id", g->owner_id, false);
        tn_reply_kv_int(&b, "granted_ms_ago", g->granted_ms_ago, false);
        if (g->end == TN_GRANT_LIVE) {
            (void)tn_buf_printf(&b, ",\"ended_ms_ago\":null,\"end\":null");
        } else {
            tn_reply_kv_int(&b, "ended_ms_ago", g->ended_ms_ago, false);
            tn_reply_kv_str(&b, "end", tn_grant_end_name(g->end), false);
        }
        (void)tn_buf_append(&b, "}", 1);
    }
    (void)tn_buf_append(&b, "]", 1);
    tn_api_body_send(c, 200, &b);
}

void tn_api_history(struct tn_api_call *c, struct tn_route_match *m)
{
    struct tn_store *s = c->api->cfg.store;
    s->ops->history(s, m->name, m->name_len, m->limit, &c->result, historied,
                    c);
}
