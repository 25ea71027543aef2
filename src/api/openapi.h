/* SPDX-License-Identifier: MIT */
/* docs/openapi.yaml as compact JSON, embedded at build time by
 * scripts/openapi-embed.py (the generated openapi_json.c) and served at
 * GET /v1/openapi.json. */
#ifndef TN_API_OPENAPI_H
#define TN_API_OPENAPI_H

#include <stddef.h>

/* The JSON bytes, followed by a NUL that tn_openapi_json_len excludes. */
extern const unsigned char tn_openapi_json[];
extern const size_t tn_openapi_json_len;

#endif
