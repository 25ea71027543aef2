/* SPDX-License-Identifier: MIT */
/* tn_err -> HTTP status and error code. */
#include "errmap.h"

#include <stddef.h>

#include <tenure/err.h>

static const struct tn_errmap_entry table[] = {
    {TN_EINVAL, 400, "bad_request", NULL},
    {TN_EUNAUTH, 401, "unauthorized", NULL},
    {TN_EFORBIDDEN, 403, "forbidden", "lease_secret does not match"},
    {TN_ENOTFOUND, 404, "not_found", "no live lease with that name"},
    {TN_EMETHOD, 405, "method_not_allowed", NULL},
    {TN_ECONFLICT, 409, "held", "the lease is held by another owner"},
    {TN_ELOST, 409, "lost", "that token is not the live lease of this name"},
    {TN_ELOCKDELAY, 409, "lock_delay",
     "the lease expired recently and is in lock delay"},
    {TN_ETOOBIG, 413, "payload_too_large", NULL},
    {TN_EMEDIA, 415, "unsupported_media_type", NULL},
    {TN_ETOOMANY, 429, "too_many_requests", NULL},
    {TN_EURITOOLONG, 414, "uri_too_long", NULL},
    {TN_EHDRTOOBIG, 431, "request_header_fields_too_large", NULL},
    {TN_ENOTIMPL, 501, "not_implemented", NULL},
    {TN_EHTTPVERSION, 505, "http_version_not_supported", NULL},
    {TN_EMISDIRECTED, 421, "misdirected_request", NULL},
    {TN_EUNAVAIL, 503, "unavailable", NULL},
    {TN_ECAPACITY, 503, "capacity", NULL},
    {TN_ENOSPC, 503, "unavailable", "store is out of disk space, retry later"},
    {TN_EBUSY, 503, "unavailable", NULL},
    {TN_ETIMEDOUT, 503, "unavailable", NULL},
};

static const struct tn_errmap_entry internal = {TN_EINTERNAL, 500, "internal",
                                                NULL};

const struct tn_errmap_entry *tn_errmap_find(int rc)
{
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (table[i].rc == rc)
            return &table[i];
    }
    return &internal;
}
