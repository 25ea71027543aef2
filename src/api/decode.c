/* SPDX-License-Identifier: MIT */
/* Request bodies: one strict JSON object, then typed fields with the
 * messages of their 400s. */
#include "decode.h"

#include <stdio.h>

#include <tenure/err.h>

#include "common/json.h"
#include "common/json_arena.h"
#include "common/name.h"

int tn_decode_body(struct tn_http_req *req, bool allow_empty, json_t **out,
                   char *msg, size_t msglen)
{
    size_t len = 0;
    const char *body = tn_http_req_body(req, &len);
    struct tn_errmsg em = {{0}};
    *out = NULL;
    tn_json_arena_begin();
    int rc = tn_json_parse_object(body, len, allow_empty, out, &em);
    tn_json_arena_end();
    if (rc < 0) {
        (void)snprintf(msg, msglen, "%s",
                       len == 0 ? "a JSON object body is required" : em.text);
        return TN_EINVAL;
    }
    return TN_OK;
}

int tn_decode_name(json_t *o, const char *key, size_t max, bool required,
                   const char **out, char *msg, size_t msglen)
{
    struct tn_errmsg em = {{0}};
    size_t len = 0;
    int rc = tn_json_get_str(o, key, out, &len, &em);
    if (rc == TN_ENOTFOUND && !required) {
        *out = NULL;
        return TN_OK;
    }
    if (rc == TN_ENOTFOUND)
        (void)snprintf(msg, msglen, "field \"%s\" is required", key);
    else if (rc < 0)
        (void)snprintf(msg, msglen, "%s", em.text);
    else if (!tn_name_is_valid(*out, len, max))
        (void)snprintf(msg, msglen,
                       "field \"%s\" must be 1-%zu bytes of printable UTF-8",
                       key, max);
    else
        return TN_OK;
    return TN_EINVAL;
}

int tn_decode_int(json_t *o, const char *key, int64_t min, int64_t max,
                  bool required, int64_t *out, char *msg, size_t msglen)
{
    struct tn_errmsg em = {{0}};
    int rc = tn_json_get_int(o, key, min, max, out, &em);
    if (rc == TN_ENOTFOUND && !required)
        return TN_OK;
    if (rc == TN_ENOTFOUND)
        (void)snprintf(msg, msglen, "field \"%s\" is required", key);
    else if (rc < 0)
        (void)snprintf(msg, msglen, "%s", em.text);
    return rc == TN_ENOTFOUND ? TN_EINVAL : rc;
}
