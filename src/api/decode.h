/* SPDX-License-Identifier: MIT */
/* The one decoder of request bodies: one strict JSON object (jansson,
 * through common/json.h: duplicate keys and trailing bytes refused) and
 * the typed fields the routes read, each failure with the message the
 * 400 carries.  Unknown fields are ignored.  Loop thread only. */
#ifndef TN_API_DECODE_H
#define TN_API_DECODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http/http.h"

/* The body of req as one JSON object in *out (a new reference: the caller
 * json_decref()s it, NULL included).  An empty body is an empty object
 * when allow_empty.  0, or TN_EINVAL with msg[0..msglen) set. */
int tn_decode_body(struct tn_http_req *req, bool allow_empty, json_t **out,
                   char *msg, size_t msglen);

/* A string field of printable UTF-8 of 1..max bytes, borrowed from o.
 * Absent (or null) and not required: 0 with *out NULL.  0, or TN_EINVAL
 * with msg set. */
int tn_decode_name(json_t *o, const char *key, size_t max, bool required,
                   const char **out, char *msg, size_t msglen);

/* An integer field in [min, max].  Absent (or null) and not required: 0,
 * *out untouched.  0, or TN_EINVAL with msg set. */
int tn_decode_int(json_t *o, const char *key, int64_t min, int64_t max,
                  bool required, int64_t *out, char *msg, size_t msglen);

#endif
