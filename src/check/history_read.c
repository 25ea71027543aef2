/* SPDX-License-Identifier: MIT */
/* History parser: strict JSON lines to paired operations and sink
 * decisions, into a history (history.c keeps its memory).  A process has
 * at most one operation open at a time; its completion is the next line
 * of the same process.  Nothing here decides what is a violation. */
#include "check/history_read.h"

#include <jansson.h>
#include <stddef.h>
#include <string.h>

#include "check/history.h"
#include "common/alloc.h"
#include "common/json.h"

#define READ_CHUNK_BYTES ((size_t)64 * 1024)

/* ---- field access with line-numbered errors ---- */

struct line_ctx {
    struct tn_history *h; /* the history being built */
    json_t *obj;          /* the line's object (borrowed) */
    uint32_t line;        /* 1-based line number */
    struct tn_errmsg *em; /* may be NULL */
};

static int bad(const struct line_ctx *c, const char *what)
{
    tn_errmsg_set(c->em, "line %u: %s", c->line, what);
    return TN_EINVAL;
}

/* What a field lookup's rc means: 0 present, 1 absent and optional, else
 * the error (said in c->em: required, or sub's reason). */
static int field_found(const struct line_ctx *c, const char *key, bool required,
                       int rc, const struct tn_errmsg *sub)
{
    if (rc == TN_ENOTFOUND && !required)
        return 1;
    if (rc == TN_ENOTFOUND) {
        tn_errmsg_set(c->em, "line %u: field \"%s\" is required", c->line, key);
        return TN_EINVAL;
    }
    return rc < 0 ? bad(c, sub->text) : 0;
}

/* An integer field in [min, max]; *out = TN_HISTORY_NONE when absent and
 * optional. */
static int get_int(const struct line_ctx *c, const char *key, int64_t min,
                   int64_t max, bool required, int64_t *out)
{
    struct tn_errmsg sub = {{0}};
    *out = TN_HISTORY_NONE;
    int rc = tn_json_get_int(c->obj, key, min, max, out, &sub);
    rc = field_found(c, key, required, rc, &sub);
    return rc < 0 ? rc : TN_OK;
}

/* A non-empty string field, interned; *id = NO_ID when absent and
 * optional. */
static int get_id(const struct line_ctx *c, const char *key, bool required,
                  uint32_t *id)
{
    struct tn_errmsg sub = {{0}};
    const char *s = NULL;
    size_t len = 0;
    *id = TN_HISTORY_NO_ID;
    int rc = tn_json_get_str(c->obj, key, &s, &len, &sub);
    rc = field_found(c, key, required, rc, &sub);
    if (rc != 0)
        return rc < 0 ? rc : TN_OK;
    if (len == 0) {
        tn_errmsg_set(c->em, "line %u: field \"%s\" is empty", c->line, key);
        return TN_EINVAL;
    }
    return tn_history_intern(c->h, s, len, id);
}

/* A string field that must be one of names[0..n); *out is its index. */
static int get_enum(const struct line_ctx *c, const char *key,
                    const char *const *names, unsigned n, unsigned *out)
{
    struct tn_errmsg sub = {{0}};
    const char *s = NULL;
    size_t len = 0;
    int rc = tn_json_get_str(c->obj, key, &s, &len, &sub);
    if (rc == TN_ENOTFOUND) {
        tn_errmsg_set(c->em, "line %u: field \"%s\" is required", c->line, key);
        return TN_EINVAL;
    }
    if (rc < 0)
        return bad(c, sub.text);
    for (unsigned i = 0; i < n; i++) {
        if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0) {
            *out = i;
            return TN_OK;
        }
    }
    tn_errmsg_set(c->em, "line %u: field \"%s\" has an unknown value \"%.64s\"",
                  c->line, key, s);
    return TN_EINVAL;
}

/* ---- events ---- */

static int add_sink(const struct line_ctx *c, int64_t t)
{
    struct tn_history *h = c->h;
    static const char *const decisions[] = {"reject", "admit"};
    struct tn_history_sink s = {.t = t, .line = c->line};
    unsigned decision = 0;
    int rc = get_id(c, "resource", true, &s.resource);
    if (rc == 0)
        rc = get_int(c, "token", 0, TN_HISTORY_MAX_VALUE, true, &s.token);
    if (rc == 0)
        rc = get_enum(c, "decision", decisions, 2, &decision);
    if (rc == 0)
        rc = get_int(c, "hwm_before", 0, TN_HISTORY_MAX_VALUE, false,
                     &s.hwm_before);
    if (rc < 0)
        return rc;
    s.admit = decision == 1;
    rc = tn_history_grow((void **)&h->sinks, &h->cap_sinks, h->n_sinks,
                         sizeof(s));
    if (rc < 0)
        return rc;
    h->sinks[h->n_sinks++] = s;
    return TN_OK;
}

/* The fields of a lease operation's invoke: name; token on renew, release
 * and check; ttl_ms on acquire (required unless under a session, where it
 * is refused, as the server refuses it) and renew (optional); session and
 * request_id on acquire. */
static int lease_invoke(const struct line_ctx *c, struct tn_history_op *op)
{
    unsigned kind = op->kind;
    bool is_acquire = kind == TN_HISTORY_ACQUIRE;
    int rc = get_id(c, "name", true, &op->name);
    if (rc == 0 && !is_acquire)
        rc = get_int(c, "token", 0, TN_HISTORY_MAX_VALUE, true, &op->token_in);
    if (rc == 0 && is_acquire)
        rc = get_id(c, "session", false, &op->session);
    if (rc < 0)
        return rc;
    bool under_session = op->session != TN_HISTORY_NO_ID;
    if (under_session && json_object_get(c->obj, "ttl_ms") != NULL)
        return bad(c, "an acquire under a session carries no \"ttl_ms\"");
    if (kind == TN_HISTORY_RENEW || (is_acquire && !under_session))
        rc = get_int(c, "ttl_ms", 1, TN_HISTORY_MAX_TTL_MS, is_acquire,
                     &op->ttl_ms);
    if (rc == 0 && is_acquire)
        rc = get_id(c, "request_id", false, &op->request_id);
    return rc;
}

/* The fields of a session operation's invoke: ttl_ms (required on open,
 * optional on renew), and the session's id (required on renew and end;
 * on open the id is the server's answer, so it may come with the ok). */
static int session_invoke(const struct line_ctx *c, struct tn_history_op *op)
{
    unsigned kind = op->kind;
    int rc =
        get_id(c, "session", kind != TN_HISTORY_SESSION_OPEN, &op->session);
    if (rc == 0 && kind != TN_HISTORY_SESSION_END)
        rc = get_int(c, "ttl_ms", 1, TN_HISTORY_MAX_TTL_MS,
                     kind == TN_HISTORY_SESSION_OPEN, &op->ttl_ms);
    return rc;
}

static int add_invoke(const struct line_ctx *c, int64_t t, uint32_t proc,
                      unsigned kind)
{
    struct tn_history *h = c->h;
    if (h->pending[proc] != 0) {
        tn_errmsg_set(c->em,
                      "line %u: process \"%.64s\" invoked an operation while "
                      "the one from line %u is still open",
                      c->line, tn_history_str(h, proc),
                      h->ops[h->pending[proc] - 1].invoke_line);
        return TN_EINVAL;
    }
    struct tn_history_op op = {.invoke_t = t,
                               .complete_t = TN_HISTORY_NEVER,
                               .token_in = TN_HISTORY_NONE,
                               .token_out = TN_HISTORY_NONE,
                               .ttl_ms = TN_HISTORY_NONE,
                               .proc = proc,
                               .name = TN_HISTORY_NO_ID,
                               .session = TN_HISTORY_NO_ID,
                               .request_id = TN_HISTORY_NO_ID,
                               .invoke_line = c->line,
                               .kind = (uint8_t)kind};
    int rc = tn_history_is_session_op(kind) ? session_invoke(c, &op)
                                            : lease_invoke(c, &op);
    if (rc == 0)
        rc = tn_history_grow((void **)&h->ops, &h->cap_ops, h->n_ops,
                             sizeof(op));
    if (rc < 0)
        return rc;
    h->ops[h->n_ops] = op;
    h->pending[proc] = (uint32_t)++h->n_ops;
    return TN_OK;
}

/* A completion's "session": it must match the invoke's; an open's ok
 * brings the id when the invoke had none, and must have one. */
static int completion_session(const struct line_ctx *c,
                              struct tn_history_op *op, unsigned phase)
{
    uint32_t session = TN_HISTORY_NO_ID;
    int rc = get_id(c, "session", false, &session);
    if (rc < 0)
        return rc;
    bool is_open = op->kind == TN_HISTORY_SESSION_OPEN;
    if (session != TN_HISTORY_NO_ID && op->session == TN_HISTORY_NO_ID &&
        is_open)
        op->session = session;
    else if (session != TN_HISTORY_NO_ID && session != op->session)
        return bad(c, "completion's session differs from its invoke's");
    if (is_open && phase == TN_HISTORY_OK && op->session == TN_HISTORY_NO_ID)
        return bad(c, "an ok session_open must carry its \"session\"");
    return TN_OK;
}

static int add_completion(const struct line_ctx *c, int64_t t, uint32_t proc,
                          unsigned kind, unsigned phase)
{
    struct tn_history *h = c->h;
    if (h->pending[proc] == 0) {
        tn_errmsg_set(c->em,
                      "line %u: completion for process \"%.64s\" without an "
                      "open invoke",
                      c->line, tn_history_str(h, proc));
        return TN_EINVAL;
    }
    struct tn_history_op *op = &h->ops[h->pending[proc] - 1];
    if (op->kind != kind)
        return bad(c, "completion's op differs from its invoke's");
    if (t < op->invoke_t)
        return bad(c, "completion's t is before its invoke's");
    uint32_t name = TN_HISTORY_NO_ID;
    int64_t token = TN_HISTORY_NONE;
    int rc = get_id(c, "name", false, &name);
    if (rc == 0)
        rc = get_int(c, "token", 0, TN_HISTORY_MAX_VALUE, false, &token);
    if (rc < 0)
        return rc;
    if (name != TN_HISTORY_NO_ID && name != op->name)
        return bad(c, "completion's name differs from its invoke's");
    rc = completion_session(c, op, phase);
    if (rc < 0)
        return rc;
    bool current = false;
    if (phase == TN_HISTORY_OK && kind == TN_HISTORY_CHECK) {
        struct tn_errmsg sub = {{0}};
        rc = tn_json_get_bool(c->obj, "current", &current, &sub);
        if (rc == TN_ENOTFOUND)
            return bad(c, "an ok check must carry \"current\"");
        if (rc < 0)
            return bad(c, sub.text);
    }
    uint32_t error = TN_HISTORY_NO_ID;
    rc = get_id(c, "error", false, &error);
    if (rc < 0)
        return rc;
    op->current = current;
    op->lost = error != TN_HISTORY_NO_ID &&
               strcmp(tn_history_str(h, error), "lost") == 0;
    if (phase == TN_HISTORY_OK && kind == TN_HISTORY_ACQUIRE &&
        token == TN_HISTORY_NONE)
        return bad(c, "an ok acquire must carry its token");
    op->outcome = (uint8_t)phase;
    op->complete_t = t;
    op->complete_line = c->line;
    op->token_out = token;
    h->pending[proc] = 0;
    return TN_OK;
}

static int add_op(const struct line_ctx *c, int64_t t)
{
    static const char *const kinds[] = {
        "acquire",      "renew",         "release",    "check",
        "session_open", "session_renew", "session_end"};
    static const char *const phases[] = {"invoke", "ok", "fail", "info"};
    uint32_t proc = 0;
    unsigned kind = 0;
    unsigned phase = 0;
    int rc = get_id(c, "proc", true, &proc);
    if (rc == 0)
        rc = get_enum(c, "op", kinds, TN_HISTORY_N_KINDS, &kind);
    if (rc == 0)
        rc = get_enum(c, "phase", phases, 4, &phase);
    if (rc == 0)
        rc = tn_history_pending_reserve(c->h, proc);
    if (rc < 0)
        return rc;
    if (phase == 0)
        return add_invoke(c, t, proc, kind);
    return add_completion(c, t, proc, kind, phase);
}

/* "src": absent or "client" is a client operation, "sink" a sink
 * decision, "nemesis" an annotation of the fault injector (ignored). */
static int dispatch(const struct line_ctx *c)
{
    static const char *const srcs[] = {"client", "sink", "nemesis"};
    int64_t t = 0;
    unsigned src = 0;
    int rc = get_int(c, "t", 0, TN_HISTORY_MAX_VALUE, true, &t);
    if (rc < 0)
        return rc;
    if (json_object_get(c->obj, "src") != NULL) {
        rc = get_enum(c, "src", srcs, 3, &src);
        if (rc < 0)
            return rc;
    }
    if (src == 2)
        return TN_OK;
    if (src == 1)
        return add_sink(c, t);
    return add_op(c, t);
}

static bool is_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    }
    return true;
}

int tn_history_add_line(struct tn_history *h, const char *line, size_t len,
                        struct tn_errmsg *em)
{
    if (h->n_lines == UINT32_MAX) {
        tn_errmsg_set(em, "too many lines");
        return TN_ETOOBIG;
    }
    struct line_ctx c = {.h = h, .line = ++h->n_lines, .em = em};
    if (len > TN_HISTORY_MAX_LINE_BYTES) {
        tn_errmsg_set(em, "line %u: longer than %zu bytes", c.line,
                      TN_HISTORY_MAX_LINE_BYTES);
        return TN_ETOOBIG;
    }
    if (is_blank(line, len))
        return TN_OK;
    json_error_t jerr;
    c.obj = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (c.obj == NULL) {
        tn_errmsg_set(em, "line %u: malformed JSON: %s at column %d", c.line,
                      jerr.text, jerr.column);
        return TN_EINVAL;
    }
    int rc =
        json_is_object(c.obj) ? dispatch(&c) : bad(&c, "not a JSON object");
    json_decref(c.obj);
    if (rc == 0)
        h->n_events++;
    return rc;
}

int tn_history_finish(struct tn_history *h)
{
    /* Open operations stay PENDING: their outcome is unknown. */
    if (h->pending != NULL)
        memset(h->pending, 0, h->cap_pending * sizeof(*h->pending));
    return TN_OK;
}

int tn_history_parse(struct tn_history *h, const char *buf, size_t len,
                     struct tn_errmsg *em)
{
    size_t start = 0;
    while (start < len) {
        const char *nl = memchr(buf + start, '\n', len - start);
        size_t end = nl != NULL ? (size_t)(nl - buf) : len;
        int rc = tn_history_add_line(h, buf + start, end - start, em);
        if (rc < 0)
            return rc;
        start = end + 1;
    }
    return tn_history_finish(h);
}

/* Feed the complete lines of chunk, keeping an unfinished tail in
 * h->partial. */
static int feed_chunk(struct tn_history *h, const char *chunk, size_t len,
                      struct tn_errmsg *em)
{
    size_t start = 0;
    while (start < len) {
        const char *nl = memchr(chunk + start, '\n', len - start);
        size_t end = nl != NULL ? (size_t)(nl - chunk) : len;
        int rc = tn_buf_append(&h->partial, chunk + start, end - start);
        if (rc == TN_ETOOBIG)
            tn_errmsg_set(em, "line %u: longer than %zu bytes", h->n_lines + 1,
                          TN_HISTORY_MAX_LINE_BYTES);
        if (rc < 0)
            return rc;
        if (nl == NULL)
            break;
        rc = tn_history_add_line(h, h->partial.data, h->partial.len, em);
        if (rc < 0)
            return rc;
        tn_buf_reset(&h->partial);
        start = end + 1;
    }
    return TN_OK;
}

int tn_history_read_stream(struct tn_history *h, FILE *f, struct tn_errmsg *em)
{
    char *chunk = tn_malloc(READ_CHUNK_BYTES);
    if (chunk == NULL)
        return TN_ENOMEM;
    int rc = TN_OK;
    size_t n = 0;
    while ((n = fread(chunk, 1, READ_CHUNK_BYTES, f)) > 0) {
        rc = feed_chunk(h, chunk, n, em);
        if (rc < 0)
            goto out_free_chunk;
    }
    if (ferror(f)) {
        tn_errmsg_set(em, "read error");
        rc = TN_EIO;
        goto out_free_chunk;
    }
    if (h->partial.len > 0) {
        rc = tn_history_add_line(h, h->partial.data, h->partial.len, em);
        tn_buf_reset(&h->partial);
        if (rc < 0)
            goto out_free_chunk;
    }
    rc = tn_history_finish(h);
out_free_chunk:
    tn_free(chunk);
    return rc;
}
