/* SPDX-License-Identifier: MIT */
/* tenure-check --html: one self-contained page with the checked history
 * as a timeline.  The page is the report and the history as JSON, and the
 * script and style that draw them (built into the binary, shared with the
 * console's timeline): it loads nothing from anywhere, so it can be mailed
 * or attached to an incident as it is. */
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "check/check.h"
#include "common/embed.h"

extern const struct tn_embed tn_check_assets[];

static json_t *events_json(const struct tn_history *h)
{
    json_t *ops = json_array();
    json_t *sinks = json_array();
    json_t *root = json_object();
    int rc = ops == NULL || sinks == NULL || root == NULL ? -1 : 0;
    for (size_t i = 0; rc == 0 && i < h->n_ops; i++)
        rc = json_array_append_new(ops, tn_check_op_json(h, i));
    for (size_t i = 0; rc == 0 && i < h->n_sinks; i++)
        rc = json_array_append_new(sinks, tn_check_sink_json(h, i));
    if (rc == 0)
        rc = json_object_set(root, "ops", ops);
    if (rc == 0)
        rc = json_object_set(root, "sinks", sinks);
    json_decref(ops);
    json_decref(sinks);
    if (rc != 0) {
        json_decref(root);
        return NULL;
    }
    return root;
}

/* The page's data: {"report": ..., "ops": [...], "sinks": [...]}. */
static char *data_json(const struct tn_history *h,
                       const struct tn_check_report *r)
{
    json_t *root = events_json(h);
    char *s = NULL;
    if (root != NULL &&
        json_object_set_new(root, "report", tn_check_report_json(h, r)) == 0)
        s = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    return s;
}

/* JSON inside <script>: '<' only occurs in strings, where \u003c means the
 * same, so no "</script>" or "<!--" in a name can end the element. */
static int put_json(FILE *out, const char *s)
{
    for (const char *p = s; *p != '\0'; p++) {
        int rc = *p == '<' ? fputs("\\u003c", out) : fputc(*p, out);
        if (rc == EOF)
            return TN_EIO;
    }
    return TN_OK;
}

static int put_text(FILE *out, const char *s)
{
    for (const char *p = s; *p != '\0'; p++) {
        const char *e = *p == '<'   ? "&lt;"
                        : *p == '>' ? "&gt;"
                        : *p == '&' ? "&amp;"
                        : *p == '"' ? "&quot;"
                                    : NULL;
        if ((e != NULL ? fputs(e, out) : fputc(*p, out)) == EOF)
            return TN_EIO;
    }
    return TN_OK;
}

static int put_asset(FILE *out, const char *tag, const char *name)
{
    const struct tn_embed *e =
        tn_embed_find(tn_check_assets, name, strlen(name));
    if (e == NULL)
        return TN_EIO;
    if (fprintf(out, "<%s>\n", tag) < 0 ||
        fwrite(e->data, 1, e->len, out) != e->len ||
        fprintf(out, "</%s>\n", tag) < 0)
        return TN_EIO;
    return TN_OK;
}

static const char head[] =
    "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
    "'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
    "<title>tenure-check: ";
static const char body[] =
    "</h1>\n<p id=\"verdict\"></p>\n<ol id=\"violations\"></ol>\n"
    "<h2>Timeline</h2>\n<p class=\"legend\">One lane per resource.  Bars: "
    "grants from the acquire's answer to their end, token and holder on the "
    "bar; ends: &#9632; released, &#215; expired (TTL from the last request "
    "sent), &#9654; revoked.  Marks below: the sink's admits (&#9679;) and "
    "rejects (&#215;).  Red: events of a violation.</p>\n"
    "<div id=\"timeline\" class=\"timeline\"></div>\n"
    "<script type=\"application/json\" id=\"tenure-history\">";

int tn_check_html_write(FILE *out, const char *title,
                        const struct tn_history *h,
                        const struct tn_check_report *r)
{
    char *data = data_json(h, r);
    if (data == NULL)
        return TN_ENOMEM;
    int rc = fputs(head, out) == EOF ? TN_EIO : TN_OK;
    if (rc == 0)
        rc = put_text(out, title);
    if (rc == 0 && fputs("</title>\n", out) == EOF)
        rc = TN_EIO;
    if (rc == 0)
        rc = put_asset(out, "style", "timeline.css");
    if (rc == 0)
        rc = put_asset(out, "style", "check.css");
    if (rc == 0 && fputs("</head>\n<body>\n<h1>tenure-check: ", out) == EOF)
        rc = TN_EIO;
    if (rc == 0)
        rc = put_text(out, title);
    if (rc == 0 && fputs(body, out) == EOF)
        rc = TN_EIO;
    if (rc == 0)
        rc = put_json(out, data);
    if (rc == 0 && fputs("</script>\n", out) == EOF)
        rc = TN_EIO;
    if (rc == 0)
        rc = put_asset(out, "script", "timeline.js");
    if (rc == 0)
        rc = put_asset(out, "script", "check.js");
    if (rc == 0 && fputs("</body>\n</html>\n", out) == EOF)
        rc = TN_EIO;
    free(data);
    return rc;
}
