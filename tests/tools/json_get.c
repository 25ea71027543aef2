/* SPDX-License-Identifier: MIT */
/* tn-json-get PATH: read one JSON value on stdin and print the member at a
 * dotted PATH ("holder.token", "leases.0.name").  Strings print raw, null
 * prints "null", objects and arrays print as compact JSON.  Exit 1 if the
 * path does not exist, 2 if stdin is not JSON.  A test helper only. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *step(json_t *v, const char *key)
{
    if (json_is_object(v))
        return json_object_get(v, key);
    if (json_is_array(v)) {
        char *end = NULL;
        long i = strtol(key, &end, 10);
        if (end == key || *end != '\0' || i < 0)
            return NULL;
        return json_array_get(v, (size_t)i);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        (void)fprintf(stderr, "usage: tn-json-get PATH < json\n");
        return 2;
    }
    json_error_t err;
    json_t *root = json_loadf(stdin, JSON_DECODE_ANY, &err);
    if (root == NULL)
        return 2;
    json_t *v = root;
    char *path = strdup(argv[1]);
    for (char *save = NULL, *k = strtok_r(path, ".", &save); k != NULL && v;
         k = strtok_r(NULL, ".", &save))
        v = step(v, k);
    free(path);
    if (v == NULL)
        return 1;
    if (json_is_string(v)) {
        (void)fputs(json_string_value(v), stdout);
    } else {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        (void)fputs(s, stdout);
        free(s);
    }
    json_decref(root);
    return 0;
}
