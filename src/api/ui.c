/* SPDX-License-Identifier: MIT */
/* GET /ui: the operator console.  Its files are built into the binary and
 * served as they are; the page holds no data of its own and talks only to
 * the public API (with the operator's bearer token, when auth is on), so
 * the files need no authentication.  The policy that the page may load
 * nothing from elsewhere is in index.html's Content-Security-Policy. */
#include <string.h>

#include <tenure/err.h>

#include "api_int.h"
#include "common/embed.h"

extern const struct tn_embed tn_ui_assets[];

void tn_api_ui(struct tn_api_call *c, struct tn_route_match *m)
{
    if (tn_route_method(m, tn_http_req_method(c->req)) < 0) {
        tn_api_fail_method(c, m->allow_header);
        return;
    }
    const char *path = tn_http_req_path(c->req);
    const char *file = path[3] == '\0' ? "" : path + 4; /* after "/ui/" */
    if (*file == '\0')
        file = "index.html";
    const struct tn_embed *e = tn_embed_find(tn_ui_assets, file, strlen(file));
    if (e == NULL) {
        tn_api_fail(c, TN_ENOTFOUND, "no such console file");
        return;
    }
    tn_api_send_typed(c, 200, e->type, e->data, e->len);
}
