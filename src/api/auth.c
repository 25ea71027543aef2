/* SPDX-License-Identifier: MIT */
/* The auth file (CONTRACT §9): loading, strict parsing, and the table's
 * lifetime; the decisions made from it are in auth_check.c.  Not a user
 * database: principals come only from the file, and a reload replaces the
 * whole table.  Invariants of a loaded table: principal names and token
 * hashes are unique, every rule grants at least one action, and nothing in
 * it changes until the last reference is dropped. */
#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth_int.h"
#include "common/alloc.h"
#include "common/json.h"
#include "common/name.h"
#include "common/rand.h"

static const char *const action_names[] = {"acquire", "read", "admin"};

/* Where a detail message is about: "principal #3 (\"ops\")". */
struct where {
    size_t index;     /* 1-based position in "principals" */
    const char *name; /* the principal's name once known, else NULL */
};

static void say(struct tn_errmsg *em, const struct where *w, const char *what)
{
    if (w->name != NULL)
        tn_errmsg_set(em, "auth file: principal #%zu (\"%s\"): %s", w->index,
                      w->name, what);
    else
        tn_errmsg_set(em, "auth file: principal #%zu: %s", w->index, what);
}

/* Every key of obj is one of allowed[0..n). */
static int check_keys(json_t *obj, const char *const *allowed, size_t n,
                      const char **bad_out)
{
    const char *key = NULL;
    json_t *v = NULL;
    json_object_foreach(obj, key, v)
    {
        size_t i = 0;
        while (i < n && strcmp(key, allowed[i]) != 0)
            i++;
        if (i == n) {
            *bad_out = key;
            return TN_EINVAL;
        }
    }
    return TN_OK;
}

static void free_principal(struct tn_auth_principal *p)
{
    for (size_t i = 0; i < p->n_rules; i++)
        tn_free(p->rules[i].prefix);
    tn_free(p->rules);
    tn_free(p->name);
    memset(p, 0, sizeof(*p));
}

static void destroy(struct tn_auth *a)
{
    for (size_t i = 0; i < a->n; i++)
        free_principal(&a->principals[i]);
    tn_free(a->principals);
    tn_free(a);
}

/* A principal name is logged as is: printable ASCII without quotes or
 * backslashes. */
static bool name_ok(const char *s, size_t len)
{
    if (len == 0 || len > TN_AUTH_NAME_MAX_BYTES)
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\')
            return false;
    }
    return true;
}

static int parse_actions(json_t *arr, const struct where *w, unsigned *out,
                         struct tn_errmsg *em)
{
    char msg[200];
    if (!json_is_array(arr) || json_array_size(arr) == 0) {
        say(em, w,
            "\"actions\" must be a non-empty array of \"acquire\" "
            "and \"read\"");
        return TN_EINVAL;
    }
    size_t i = 0;
    json_t *v = NULL;
    *out = 0;
    json_array_foreach(arr, i, v)
    {
        const char *s = json_is_string(v) ? json_string_value(v) : "";
        if (strcmp(s, "acquire") == 0) {
            *out |= ACT_BIT(TN_AUTH_ACQUIRE);
        } else if (strcmp(s, "read") == 0) {
            *out |= ACT_BIT(TN_AUTH_READ);
        } else {
            (void)snprintf(msg, sizeof(msg),
                           "unknown action \"%.40s\" (actions are \"acquire\" "
                           "and \"read\"; admins have \"admin\": true)",
                           s);
            say(em, w, msg);
            return TN_EINVAL;
        }
    }
    return TN_OK;
}

static int parse_rule(json_t *obj, const struct where *w, struct rule *r,
                      struct tn_errmsg *em)
{
    static const char *const keys[] = {"prefix", "actions"};
    const char *bad = NULL;
    char msg[200];
    if (!json_is_object(obj)) {
        say(em, w, "each \"allow\" rule must be an object");
        return TN_EINVAL;
    }
    if (check_keys(obj, keys, 2, &bad) < 0) {
        (void)snprintf(msg, sizeof(msg), "unknown key \"%.40s\" in a rule",
                       bad);
        say(em, w, msg);
        return TN_EINVAL;
    }
    json_t *pv = json_object_get(obj, "prefix");
    if (!json_is_string(pv)) {
        say(em, w, "each rule needs a string \"prefix\" (\"\" for all)");
        return TN_EINVAL;
    }
    const char *pre = json_string_value(pv);
    size_t len = json_string_length(pv);
    if (len > 0 && !tn_name_is_valid(pre, len, TN_NAME_MAX_BYTES)) {
        say(em, w, "\"prefix\" must be printable UTF-8 of at most 256 bytes");
        return TN_EINVAL;
    }
    int rc = parse_actions(json_object_get(obj, "actions"), w, &r->actions, em);
    if (rc < 0)
        return rc;
    r->prefix = tn_strndup(pre, len);
    r->prefix_len = len;
    return r->prefix != NULL ? TN_OK : TN_ENOMEM;
}

static int parse_rules(json_t *arr, const struct where *w,
                       struct tn_auth_principal *p, struct tn_errmsg *em)
{
    if (arr == NULL)
        return TN_OK;
    if (!json_is_array(arr) || json_array_size(arr) > TN_AUTH_MAX_RULES) {
        say(em, w, "\"allow\" must be an array of at most 256 rules");
        return TN_EINVAL;
    }
    size_t n = json_array_size(arr);
    if (n == 0)
        return TN_OK;
    p->rules = tn_calloc(n, sizeof(*p->rules));
    if (p->rules == NULL)
        return TN_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int rc = parse_rule(json_array_get(arr, i), w, &p->rules[i], em);
        if (rc < 0)
            return rc;
        p->n_rules = i + 1;
    }
    return TN_OK;
}

static int parse_one_hash(json_t *v, const struct where *w, uint8_t *out,
                          struct tn_errmsg *em)
{
    if (!json_is_string(v) ||
        tn_hex_decode(json_string_value(v), json_string_length(v), out,
                      HASH_BYTES) < 0) {
        say(em, w,
            "\"token_sha256\" must be the 64 hex digits of the SHA-256 of "
            "the bearer token (printf %s \"$TOKEN\" | sha256sum), or a list "
            "of 1-4 of them");
        return TN_EINVAL;
    }
    return TN_OK;
}

/* One hash, or a list of up to TN_AUTH_MAX_TOKENS so that a token can be
 * rotated without a moment in which neither works. */
static int parse_hash(json_t *v, const struct where *w,
                      struct tn_auth_principal *p, struct tn_errmsg *em)
{
    if (!json_is_array(v)) {
        p->n_hashes = 1;
        return parse_one_hash(v, w, p->hash[0], em);
    }
    size_t n = json_array_size(v);
    if (n == 0 || n > TN_AUTH_MAX_TOKENS)
        return parse_one_hash(NULL, w, p->hash[0], em);
    for (size_t i = 0; i < n; i++) {
        int rc = parse_one_hash(json_array_get(v, i), w, p->hash[i], em);
        if (rc < 0)
            return rc;
    }
    p->n_hashes = n;
    return TN_OK;
}

/* A hash of p that is also one of q's (or an earlier one of p's). */
static bool shares_hash(const struct tn_auth_principal *p,
                        const struct tn_auth_principal *q)
{
    for (size_t i = 0; i < p->n_hashes; i++) {
        size_t n = p == q ? i : q->n_hashes;
        for (size_t j = 0; j < n; j++) {
            /* Not constant-time: a load reveals nothing about requests. */
            if (memcmp(p->hash[i], q->hash[j], HASH_BYTES) == 0)
                return true;
        }
    }
    return false;
}

static int parse_admin(json_t *v, const struct where *w,
                       struct tn_auth_principal *p, struct tn_errmsg *em)
{
    if (v == NULL)
        return TN_OK;
    if (!json_is_boolean(v)) {
        say(em, w, "\"admin\" must be true or false");
        return TN_EINVAL;
    }
    p->admin = json_is_true(v);
    return TN_OK;
}

static int parse_principal(json_t *obj, struct where *w,
                           struct tn_auth_principal *p, struct tn_errmsg *em)
{
    static const char *const keys[] = {"name", "token_sha256", "admin",
                                       "allow"};
    const char *bad = NULL;
    char msg[200];
    if (!json_is_object(obj)) {
        say(em, w, "must be an object");
        return TN_EINVAL;
    }
    json_t *nv = json_object_get(obj, "name");
    if (!json_is_string(nv) ||
        !name_ok(json_string_value(nv), json_string_length(nv))) {
        say(em, w,
            "\"name\" must be 1-128 printable ASCII characters "
            "without quotes or backslashes");
        return TN_EINVAL;
    }
    p->name = tn_strndup(json_string_value(nv), json_string_length(nv));
    if (p->name == NULL)
        return TN_ENOMEM;
    p->name_len = json_string_length(nv);
    w->name = p->name;
    if (check_keys(obj, keys, 4, &bad) < 0) {
        (void)snprintf(msg, sizeof(msg), "unknown key \"%.40s\"", bad);
        say(em, w, msg);
        return TN_EINVAL;
    }
    int rc = parse_hash(json_object_get(obj, "token_sha256"), w, p, em);
    if (rc == 0)
        rc = parse_admin(json_object_get(obj, "admin"), w, p, em);
    if (rc == 0)
        rc = parse_rules(json_object_get(obj, "allow"), w, p, em);
    return rc;
}

/* Names identify principals (leases are bound to them) and hashes
 * authenticate them: both must be unique. */
static int check_unique(const struct tn_auth *a, struct tn_errmsg *em)
{
    for (size_t i = 0; i < a->n; i++) {
        const struct tn_auth_principal *p = &a->principals[i];
        if (shares_hash(p, p)) {
            struct where w = {i + 1, p->name};
            say(em, &w, "the same token_sha256 twice");
            return TN_EINVAL;
        }
        for (size_t j = 0; j < i; j++) {
            const struct tn_auth_principal *q = &a->principals[j];
            struct where w = {i + 1, p->name};
            if (p->name_len == q->name_len &&
                memcmp(p->name, q->name, p->name_len) == 0) {
                say(em, &w, "duplicate principal name");
                return TN_EINVAL;
            }
            if (shares_hash(p, q)) {
                char msg[200];
                (void)snprintf(msg, sizeof(msg),
                               "same token_sha256 as principal \"%s\"",
                               q->name);
                say(em, &w, msg);
                return TN_EINVAL;
            }
        }
    }
    return TN_OK;
}

static int parse_principals(json_t *root, struct tn_auth *a,
                            struct tn_errmsg *em)
{
    static const char *const keys[] = {"principals"};
    const char *bad = NULL;
    if (check_keys(root, keys, 1, &bad) < 0) {
        tn_errmsg_set(em, "auth file: unknown top-level key \"%.40s\"", bad);
        return TN_EINVAL;
    }
    json_t *arr = json_object_get(root, "principals");
    if (!json_is_array(arr) || json_array_size(arr) > TN_AUTH_MAX_PRINCIPALS) {
        tn_errmsg_set(em, "auth file: \"principals\" must be an array of at "
                          "most 4096 principals");
        return TN_EINVAL;
    }
    size_t n = json_array_size(arr);
    if (n > 0) {
        a->principals = tn_calloc(n, sizeof(*a->principals));
        if (a->principals == NULL)
            return TN_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        struct where w = {i + 1, NULL};
        a->n = i + 1;
        int rc =
            parse_principal(json_array_get(arr, i), &w, &a->principals[i], em);
        if (rc < 0)
            return rc;
    }
    return check_unique(a, em);
}

int tn_auth_parse(const char *text, size_t len, struct tn_auth **out,
                  struct tn_errmsg *em)
{
    *out = NULL;
    if (sodium_init() < 0)
        return TN_EINTERNAL;
    if (len > TN_AUTH_FILE_MAX_BYTES) {
        tn_errmsg_set(em, "auth file: larger than %u bytes",
                      TN_AUTH_FILE_MAX_BYTES);
        return TN_EINVAL;
    }
    json_t *root = NULL;
    struct tn_errmsg jem = {{0}};
    int rc = tn_json_parse_object(text, len, false, &root, &jem);
    if (rc < 0) {
        tn_errmsg_set(em, "auth file: %s", jem.text);
        return rc;
    }
    struct tn_auth *a = tn_calloc(1, sizeof(*a));
    if (a == NULL) {
        rc = TN_ENOMEM;
        goto out_decref;
    }
    atomic_init(&a->refs, 1u);
    rc = parse_principals(root, a, em);
    if (rc < 0) {
        destroy(a);
        goto out_decref;
    }
    *out = a;
out_decref:
    json_decref(root);
    return rc;
}

/* Read the whole file into a fresh buffer, refusing what an attacker who
 * is not root could have written. */
static int read_file(int fd, const char *path, char **buf_out, size_t *len_out,
                     struct tn_errmsg *em)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        tn_errmsg_set(em, "auth file \"%s\" is not a regular file", path);
        return TN_EINVAL;
    }
    if ((st.st_mode & S_IWOTH) != 0) {
        tn_errmsg_set(em, "auth file \"%s\" is writable by others: chmod o-w",
                      path);
        return TN_EINVAL;
    }
    if (st.st_size > (off_t)TN_AUTH_FILE_MAX_BYTES) {
        tn_errmsg_set(em, "auth file \"%s\" is larger than %u bytes", path,
                      TN_AUTH_FILE_MAX_BYTES);
        return TN_EINVAL;
    }
    size_t cap = (size_t)st.st_size + 1;
    char *buf = tn_malloc(cap);
    if (buf == NULL)
        return TN_ENOMEM;
    size_t len = 0;
    while (len < cap) {
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            tn_free(buf);
            tn_errmsg_set(em, "cannot read auth file \"%s\"", path);
            return TN_EIO;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    /* A file that grew while being read (written in place instead of
     * renamed into place) ends up cut short and fails to parse, so a reload
     * keeps the previous table rather than a half-written one. */
    *buf_out = buf;
    *len_out = len;
    return TN_OK;
}

int tn_auth_load(const char *path, struct tn_auth **out, struct tn_errmsg *em)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        /* Not strerror: it is not thread-safe. */
        int e = errno;
        tn_errmsg_set(em, "cannot open auth file \"%s\": %s", path,
                      e == ENOENT   ? "no such file"
                      : e == EACCES ? "permission denied"
                                    : "open failed");
        return TN_EIO;
    }
    char *buf = NULL;
    size_t len = 0;
    int rc = read_file(fd, path, &buf, &len, em);
    (void)close(fd);
    if (rc < 0)
        return rc;
    rc = tn_auth_parse(buf, len, out, em);
    tn_free(buf);
    return rc;
}

struct tn_auth *tn_auth_ref(struct tn_auth *a)
{
    (void)atomic_fetch_add_explicit(&a->refs, 1u, memory_order_relaxed);
    return a;
}

void tn_auth_free(struct tn_auth *a)
{
    if (a == NULL)
        return;
    if (atomic_fetch_sub_explicit(&a->refs, 1u, memory_order_acq_rel) == 1u)
        destroy(a);
}

size_t tn_auth_principal_count(const struct tn_auth *a)
{
    return a->n;
}

const char *tn_auth_action_name(enum tn_auth_action act)
{
    if ((unsigned)act < sizeof(action_names) / sizeof(action_names[0]))
        return action_names[act];
    return "unknown";
}
