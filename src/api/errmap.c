/* SPDX-License-Identifier: MIT */
/* tn_err -> HTTP status and error code. */
#include "errmap.h"

#include <stddef.h>

#include <tenure/err.h>

static const struct tn_errmap_entry table[] = {
    {TN_EINVAL, 400, "bad_request"},
    {TN_EUNAUTH, 401, "unauthorized"},
    {TN_EFORBIDDEN, 403, "forbidden"},
    {TN_ENOTFOUND, 404, "not_found"},
    {TN_EMETHOD, 405, "method_not_allowed"},
    {TN_ECONFLICT, 409, "held"},
    {TN_ELOST, 409, "lost"},
    {TN_ELOCKDELAY, 409, "lock_delay"},
    {TN_ETOOBIG, 413, "payload_too_large"},
    {TN_EMEDIA, 415, "unsupported_media_type"},
    {TN_ETOOMANY, 429, "too_many_requests"},
    {TN_EURITOOLONG, 414, "uri_too_long"},
    {TN_EHDRTOOBIG, 431, "request_header_fields_too_large"},
    {TN_ENOTIMPL, 501, "not_implemented"},
    {TN_EUNAVAIL, 503, "unavailable"},
    {TN_ECAPACITY, 503, "capacity"},
    {TN_ENOSPC, 503, "unavailable"},
    {TN_EBUSY, 503, "unavailable"},
    {TN_ETIMEDOUT, 503, "unavailable"},
};

static const struct tn_errmap_entry internal = {TN_EINTERNAL, 500, "internal"};

const struct tn_errmap_entry *tn_errmap_find(int rc)
{
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (table[i].rc == rc)
            return &table[i];
    }
    return &internal;
}
