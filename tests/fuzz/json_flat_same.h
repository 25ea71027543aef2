/* SPDX-License-Identifier: MIT */
/* Shared by the fuzz target and the unit test of the flat-body decoder:
 * does what the decoder found equal jansson's object of the same bytes? */
#ifndef TN_TESTS_JSON_FLAT_SAME_H
#define TN_TESTS_JSON_FLAT_SAME_H

#include <jansson.h>
#include <string.h>

#include "common/json.h"
#include "common/json_flat.h"

/* NULL when each member of f is in obj with the same value and obj has no
 * other member; else what differs. */
static inline const char *tn_json_flat_differs(json_t *obj,
                                               const struct tn_json_flat *f)
{
    if (!json_is_object(obj) || json_object_size(obj) != f->n)
        return "not an object of as many members";
    for (size_t i = 0; i < f->n; i++) {
        const struct tn_json_flat_member *m = &f->m[i];
        json_t *v = json_object_get(obj, m->key);
        if (strlen(m->key) != m->key_len || v == NULL)
            return "a key";
        switch (m->type) {
        case TN_JSON_FLAT_STRING:
            if (!json_is_string(v) || json_string_length(v) != m->str_len ||
                strlen(m->str) != m->str_len ||
                memcmp(json_string_value(v), m->str, m->str_len) != 0)
                return "a string";
            break;
        case TN_JSON_FLAT_INTEGER:
            if (!json_is_integer(v) || json_integer_value(v) != m->num)
                return "an integer";
            break;
        case TN_JSON_FLAT_TRUE:
            if (!json_is_true(v))
                return "a true";
            break;
        case TN_JSON_FLAT_FALSE:
            if (!json_is_false(v))
                return "a false";
            break;
        case TN_JSON_FLAT_NULL:
            if (!json_is_null(v))
                return "a null";
            break;
        default:
            return "a member type";
        }
    }
    return NULL;
}

/* NULL when jansson's getters on obj and the flat getters on f agree on
 * key (return code, value, message): the string getter, the integer
 * getter under each of the n_bounds {min, max} pairs, the boolean getter;
 * else which getter differs. */
static inline const char *
tn_json_flat_getters_differ(json_t *obj, const struct tn_json_flat *f,
                            const char *key, const int64_t (*bounds)[2],
                            size_t n_bounds)
{
    struct tn_errmsg e1 = {{0}};
    struct tn_errmsg e2 = {{0}};
    const char *s1 = NULL;
    const char *s2 = NULL;
    size_t l1 = 0;
    size_t l2 = 0;
    if (tn_json_get_str(obj, key, &s1, &l1, &e1) !=
            tn_json_flat_get_str(f, key, &s2, &l2, &e2) ||
        strcmp(e1.text, e2.text) != 0 || l1 != l2 ||
        (s1 == NULL) != (s2 == NULL) ||
        (s1 != NULL && memcmp(s1, s2, l1 + 1) != 0))
        return "the string getter";
    for (size_t i = 0; i < n_bounds; i++) {
        int64_t n1 = 12345;
        int64_t n2 = 12345;
        e1.text[0] = e2.text[0] = '\0';
        if (tn_json_get_int(obj, key, bounds[i][0], bounds[i][1], &n1, &e1) !=
                tn_json_flat_get_int(f, key, bounds[i][0], bounds[i][1], &n2,
                                     &e2) ||
            strcmp(e1.text, e2.text) != 0 || n1 != n2)
            return "the integer getter";
    }
    bool b1 = false;
    bool b2 = false;
    e1.text[0] = e2.text[0] = '\0';
    if (tn_json_get_bool(obj, key, &b1, &e1) !=
            tn_json_flat_get_bool(f, key, &b2, &e2) ||
        strcmp(e1.text, e2.text) != 0 || b1 != b2)
        return "the boolean getter";
    return NULL;
}

#endif
