/* SPDX-License-Identifier: MIT */
/* Shared by the fuzz target and the unit test of the flat-body decoder:
 * does what the decoder found equal jansson's object of the same bytes? */
#ifndef TN_TESTS_JSON_FLAT_SAME_H
#define TN_TESTS_JSON_FLAT_SAME_H

#include <jansson.h>
#include <string.h>

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

#endif
