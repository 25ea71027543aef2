/* SPDX-License-Identifier: MIT */
/* GET /ui: the operator console.  Its files are built into the binary and
 * served as they are; the page holds no data of its own and talks only to
 * the public API (with the operator's bearer token, when auth is on), so
 * the files need no authentication.  Each is sent with a strict
 * Content-Security-Policy: the page may load nothing from elsewhere. */
#include <string.h>

#include <tenure/err.h>

#include "api_int.h"
#include "common/embed.h"

extern const struct tn_embed tn_ui_assets[];

/* The page may load and talk to nothing but this server, may not be
 * framed, and sends no referrer; index.html repeats the policy in a meta
 * element for a copy saved to disk. */
#define UI_FIELDS                                                              \
    "Content-Security-Policy: default-src 'none'; script-src 'self'; "         \
    "style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; "  \
    "form-action 'none'; frame-ancestors 'none'\r\n"                           \
    "X-Content-Type-Options: nosniff\r\n"                                      \
    "Referrer-Policy: no-referrer\r\n"                                         \
    "Cache-Control: no-cache\r\n"

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
    tn_http_req_set_fields(c->req, UI_FIELDS);
    tn_api_send_typed(c, 200, e->type, e->data, e->len);
}
