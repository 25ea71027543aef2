/* SPDX-License-Identifier: MIT */
/* Request bodies: yajl's events into an array of the top-level fields,
 * then typed fields with the messages of their 400s.
 *
 * yajl does the grammar, the escapes and trailing bytes; what it lets through
 * and RFC 8259 (or the API) does not is checked here: before the parse, over
 * the whole body, control bytes, UTF-8 and surrogate escapes (prescan.c);
 * during it, escaped NULs, duplicate keys and the depth. */
#include "decode.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include <tenure/err.h>

#include "common/name.h"
#include "common/rand.h"
#include "prescan.h"

#define TN_STR_(x) #x
#define TN_STR(x) TN_STR_(x)

/* yajl's allocations while one body is parsed: a handle, a lexer, a few
 * buffers, all freed by yajl_free; taken from a region on the stack (the
 * heap once it is full), each block after a header with its size for
 * realloc. */
#define ARENA_HDR 16

struct arena {
    size_t used;
    _Alignas(16) unsigned char mem[4096];
};

struct parse {
    struct tn_body *b;
    yajl_handle h;
    size_t end;   /* just past the top-level object's '}' */
    bool escapes; /* the body has a backslash: a string may hold a NUL */
    int depth;    /* containers open */
    size_t key0[TN_DECODE_MAX_DEPTH]; /* each one's first entry in b->keys */
    bool in_array;    /* depth 2 is the array of a top-level field */
    bool elem_obj;    /* the element open at depth 3 is an object */
    const char *mkey; /* its member whose value comes next */
    size_t mkey_len;  /* bytes */
    const char *why;  /* our own reason, when a callback stopped the parse */
    bool nomem;
    struct arena arena;
};

static bool arena_owns(const struct arena *a, const void *p)
{
    return (uintptr_t)p - (uintptr_t)a->mem < sizeof(a->mem);
}

static void *arena_malloc(void *ctx, size_t n)
{
    struct arena *a = ctx;
    size_t need = ARENA_HDR + ((n + 15) & ~(size_t)15);
    if (n > sizeof(a->mem) || need > sizeof(a->mem) - a->used)
        return malloc(n);
    unsigned char *p = a->mem + a->used;
    memcpy(p, &n, sizeof(n));
    a->used += need;
    return p + ARENA_HDR;
}

static void arena_free(void *ctx, void *p)
{
    if (!arena_owns(ctx, p))
        free(p);
}

static void *arena_realloc(void *ctx, void *p, size_t n)
{
    if (p == NULL)
        return arena_malloc(ctx, n);
    if (!arena_owns(ctx, p))
        return realloc(p, n);
    size_t old;
    memcpy(&old, (unsigned char *)p - ARENA_HDR, sizeof(old));
    if (n <= old)
        return p;
    void *q = arena_malloc(ctx, n);
    if (q != NULL)
        memcpy(q, p, old);
    return q;
}

/* The one reason of our own that is not "malformed": said as it is. */
static const char not_object[] = "the body must be a JSON object";

static int stop(struct parse *p, const char *why)
{
    p->why = why;
    return 0;
}

/* A copy of s[0..len), NUL-terminated, in the body's text: never more
 * than the body's length in all, as a string's copy and its NUL are
 * shorter than its quoted, escaped form. */
static const char *copy(struct parse *p, const unsigned char *s, size_t len)
{
    struct tn_body *b = p->b;
    if (len >= b->text_cap - b->text_used) {
        p->nomem = true;
        return NULL;
    }
    char *d = b->text + b->text_used;
    memcpy(d, s, len);
    d[len] = '\0';
    b->text_used += len + 1;
    return d;
}

/* The body was checked whole for UTF-8 and surrogate escapes before the
 * parse (prescan), so a string can only be wrong by an escaped NUL. */
static int check_str(struct parse *p, const unsigned char *s, size_t len)
{
    if (p->escapes && memchr(s, '\0', len) != NULL)
        return stop(p, "a string or key holds a NUL");
    return 1;
}

static struct tn_body_field *new_field(struct parse *p)
{
    struct tn_body *b = p->b;
    if (b->n == b->fcap) {
        size_t cap = 2 * b->fcap;
        struct tn_body_field *v = b->fields == b->fsmall
                                      ? malloc(cap * sizeof(*v))
                                      : realloc(b->fields, cap * sizeof(*v));
        if (v == NULL) {
            p->nomem = true;
            return NULL;
        }
        if (b->fields == b->fsmall)
            memcpy(v, b->fsmall, sizeof(b->fsmall));
        b->fields = v;
        b->fcap = cap;
    }
    return &b->fields[b->n++];
}

/* Room for one more item (there is less than max_items): the array
 * doubles from 16, up to max_items.  False when out of memory. */
static bool item_room(struct parse *p)
{
    struct tn_body *b = p->b;
    if (b->n_items < b->cap_items)
        return true;
    size_t cap = b->cap_items == 0 ? 16 : 2 * b->cap_items;
    if (cap > b->max_items)
        cap = b->max_items;
    struct tn_body_item *v = realloc(b->items, cap * sizeof(*v));
    if (v == NULL) {
        p->nomem = true;
        return false;
    }
    b->items = v;
    b->cap_items = cap;
    return true;
}

/* What a top-level array holds: an element (depth 2), or a member of an
 * element that is an object (depth 3).  Counted always, kept as an item
 * when the caller asked for items and there is room. */
static int item(struct parse *p, enum tn_body_type type, const unsigned char *s,
                size_t len, int64_t num)
{
    struct tn_body *b = p->b;
    struct tn_body_field *f = &b->fields[b->n - 1];
    if (!p->in_array || (p->depth == 3 && !p->elem_obj))
        return 1;
    if (p->depth == 2)
        f->n_elems++;
    if (f->items_cut || b->n_items == b->max_items) {
        f->items_cut = true;
        return 1;
    }
    if (!item_room(p))
        return 0;
    struct tn_body_item *it = &b->items[b->n_items];
    it->key = p->depth == 3 ? p->mkey : NULL;
    it->key_len = p->depth == 3 ? p->mkey_len : 0;
    it->elem = f->n_elems - 1;
    it->type = type;
    it->num = num;
    it->str = NULL;
    it->str_len = len;
    it->out_of_range = false;
    if (type == TN_BODY_STRING && (it->str = copy(p, s, len)) == NULL)
        return 0;
    b->n_items++;
    f->n_items++;
    return 1;
}

/* A value: kept when it is a top-level field's. */
static int value(struct parse *p, enum tn_body_type type,
                 const unsigned char *s, size_t len, int64_t num)
{
    if (p->depth == 0)
        return stop(p, not_object);
    if (p->depth > 1)
        return p->depth <= 3 ? item(p, type, s, len, num) : 1;
    struct tn_body_field *f = &p->b->fields[p->b->n - 1];
    f->type = type;
    f->num = num;
    if (type == TN_BODY_STRING) {
        f->str = copy(p, s, len);
        f->str_len = len;
        if (f->str == NULL)
            return 0;
    }
    return 1;
}

static int on_null(void *ctx)
{
    return value(ctx, TN_BODY_NULL, NULL, 0, 0);
}

static int on_bool(void *ctx, int v)
{
    return value(ctx, TN_BODY_BOOL, NULL, 0, v != 0);
}

/* yajl hands over each number as its text (yajl's own integer callback
 * fails the whole parse past 64 bits).  An integer out of int64's range is
 * kept as such: refused where the API reads the field, ignored in an
 * unknown one (docs/API.md).  A number with a fraction or an exponent is
 * a real, whatever its size: no field takes one. */
static int on_number(void *ctx, const char *s, size_t len)
{
    struct parse *p = ctx;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
            return value(p, TN_BODY_REAL, NULL, 0, 0);
    }
    char text[24]; /* int64's longest, its sign and a NUL */
    long long v = 0;
    bool big = len >= sizeof(text);
    if (!big) {
        memcpy(text, s, len);
        text[len] = '\0';
        errno = 0;
        v = strtoll(text, NULL, 10);
        big = errno == ERANGE;
    }
    size_t items = p->b->n_items;
    if (!value(p, TN_BODY_INT, NULL, 0, v))
        return 0;
    if (big && p->depth == 1)
        p->b->fields[p->b->n - 1].out_of_range = true;
    if (big && p->b->n_items > items) /* kept as an item of an array */
        p->b->items[p->b->n_items - 1].out_of_range = true;
    return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t len)
{
    return check_str(ctx, s, len) && value(ctx, TN_BODY_STRING, s, len, 0);
}

static int open_container(struct parse *p, bool map)
{
    if (p->depth == 0 && !map)
        return stop(p, not_object);
    if (p->depth == TN_DECODE_MAX_DEPTH)
        return stop(
            p, "nested deeper than " TN_STR(TN_DECODE_MAX_DEPTH) " levels");
    enum tn_body_type type = map ? TN_BODY_OBJECT : TN_BODY_ARRAY;
    if (p->depth >= 1 && !value(p, type, NULL, 0, 0))
        return 0;
    if (p->depth == 1) {
        p->in_array = !map;
        p->b->fields[p->b->n - 1].item0 = p->b->n_items;
    }
    if (p->depth == 2)
        p->elem_obj = map;
    p->key0[p->depth] = p->b->keys.len;
    p->depth++;
    return 1;
}

static int on_start_map(void *ctx)
{
    return open_container(ctx, true);
}

static int on_start_array(void *ctx)
{
    return open_container(ctx, false);
}

static int on_key(void *ctx, const unsigned char *s, size_t len)
{
    struct parse *p = ctx;
    if (!check_str(p, s, len))
        return 0;
    const char *k = copy(p, s, len);
    if (k == NULL)
        return 0;
    struct tn_body_field e = {.key = k, .key_len = len};
    p->mkey = k;
    p->mkey_len = len;
    if (p->depth == 1) {
        struct tn_body_field *f = new_field(p);
        if (f != NULL)
            *f = e;
        return f != NULL;
    }
    if (tn_buf_append(&p->b->keys, &e, sizeof(e)) == 0)
        return 1;
    p->nomem = true;
    return 0;
}

/* Whether no two of the n keys at v are equal.  A body's object has a
 * handful of keys: compared pairwise; past 16 they are sorted first (the
 * top level's stay sorted, for tn_decode_field). */
static bool unique(struct tn_body_field *v, size_t n)
{
    if (n <= 16) {
        for (size_t i = 1; i < n; i++)
            for (size_t j = 0; j < i; j++)
                if (tn_decode_cmp_field(&v[j], &v[i]) == 0)
                    return false;
        return true;
    }
    qsort(v, n, sizeof(*v), tn_decode_cmp_field);
    for (size_t i = 1; i < n; i++)
        if (tn_decode_cmp_field(&v[i - 1], &v[i]) == 0)
            return false;
    return true;
}

static int on_end_map(void *ctx)
{
    struct parse *p = ctx;
    p->depth--;
    bool ok;
    if (p->depth == 0) {
        p->end = yajl_get_bytes_consumed(p->h);
        ok = unique(p->b->fields, p->b->n);
    } else {
        struct tn_buf *k = &p->b->keys;
        size_t key0 = p->key0[p->depth];
        size_t n = (k->len - key0) / sizeof(struct tn_body_field);
        ok = n < 2 || unique((struct tn_body_field *)(k->data + key0), n);
        k->len = key0;
    }
    return ok ? 1 : stop(p, "duplicate key");
}

static int on_end_array(void *ctx)
{
    struct parse *p = ctx;
    p->depth--;
    if (p->depth == 1)
        p->in_array = false;
    return 1;
}

static const yajl_callbacks events = {
    .yajl_null = on_null,
    .yajl_boolean = on_bool,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_key,
    .yajl_end_map = on_end_map,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end_array,
};

static int fail(char *msg, size_t msglen, const char *text)
{
    (void)snprintf(msg, msglen, "%s", text);
    return TN_EINVAL;
}

static int parse_error(yajl_handle h, const struct parse *p, const char *buf,
                       size_t len, char *msg, size_t msglen)
{
    if (p->nomem)
        return TN_ENOMEM;
    if (p->why == not_object)
        return fail(msg, msglen, p->why);
    size_t at = yajl_get_bytes_consumed(h);
    unsigned char *e = NULL;
    const char *why = p->why;
    if (why == NULL) {
        e = yajl_get_error(h, 0, (const unsigned char *)buf, len);
        why = e != NULL ? (const char *)e : "malformed";
    }
    size_t n = strcspn(why, "\n");
    (void)snprintf(msg, msglen, "malformed JSON body: %.*s at byte %zu", (int)n,
                   why, at);
    if (e != NULL)
        yajl_free_error(h, e);
    return TN_EINVAL;
}

static void init(struct tn_body *b)
{
    b->fields = b->fsmall;
    b->n = 0;
    b->fcap = TN_BODY_FIELDS_INLINE;
    b->text = b->tsmall;
    b->text_used = 0;
    b->text_cap = sizeof(b->tsmall);
    b->items = NULL;
    b->n_items = b->cap_items = b->max_items = 0;
    tn_buf_init(&b->keys, SIZE_MAX / 2);
}

/* buf[0..len) into out, keeping up to max_items items of its arrays. */
static int decode(const char *buf, size_t len, size_t max_items,
                  struct tn_body *out, char *msg, size_t msglen)
{
    struct parse p;
    p.b = out;
    p.depth = 0;
    p.in_array = p.elem_obj = false;
    p.mkey = NULL;
    p.mkey_len = 0;
    p.why = tn_json_prescan(buf, len, &p.escapes);
    p.nomem = false;
    p.arena.used = 0;
    if (p.why != NULL) {
        (void)snprintf(msg, msglen, "malformed JSON body: %s", p.why);
        return TN_EINVAL;
    }
    out->max_items = max_items;
    if (len + 1 > out->text_cap) {
        out->text = malloc(len + 1);
        out->text_cap = len + 1;
    }
    yajl_alloc_funcs af = {arena_malloc, arena_realloc, arena_free, &p.arena};
    yajl_handle h = out->text != NULL ? yajl_alloc(&events, &af, &p) : NULL;
    if (h == NULL)
        return TN_ENOMEM;
    p.h = h;
    p.end = len;
    yajl_status st = yajl_parse(h, (const unsigned char *)buf, len);
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    int rc = st == yajl_status_ok ? TN_OK
                                  : parse_error(h, &p, buf, len, msg, msglen);
    if (rc == TN_OK && !tn_json_only_space_after(buf, len, p.end)) {
        (void)snprintf(msg, msglen,
                       "malformed JSON body: trailing garbage at byte %zu",
                       p.end);
        rc = TN_EINVAL;
    }
    yajl_free(h);
    return rc;
}

int tn_decode_json(const char *buf, size_t len, bool allow_empty,
                   struct tn_body *out, char *msg, size_t msglen)
{
    init(out);
    if (len == 0)
        return allow_empty
                   ? TN_OK
                   : fail(msg, msglen, "a JSON object body is required");
    return decode(buf, len, 0, out, msg, msglen);
}

int tn_decode_json_items(const char *buf, size_t len, size_t max_items,
                         struct tn_body *out, char *msg, size_t msglen)
{
    init(out);
    if (len == 0)
        return fail(msg, msglen, "a JSON object body is required");
    return decode(buf, len, max_items, out, msg, msglen);
}

void tn_decode_done(struct tn_body *b)
{
    if (b->text != b->tsmall)
        free(b->text);
    if (b->fields != b->fsmall)
        free(b->fields);
    free(b->items);
    tn_buf_release(&b->keys);
    init(b);
}
