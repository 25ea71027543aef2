/* SPDX-License-Identifier: MIT */
/* Decoding of tenured's JSON answers: the error table of CONTRACT §3 mapped
 * onto tn_err, and lease objects.  Pure functions over jansson; nothing
 * here touches the network or a clock. */
#include <string.h>

#include <tenure/err.h>
#include <tenure/session.h>

#include "client/client_internal.h"
#include "common/json.h"

struct err_row {
    const char *code; /* "error" member of the body */
    int rc;           /* tn_err */
};

static const struct err_row err_table[] = {
    {"bad_request", TN_EINVAL},
    {"forbidden", TN_EFORBIDDEN},
    {"not_found", TN_ENOTFOUND},
    {"method_not_allowed", TN_EMETHOD},
    {"held", TN_ECONFLICT},
    {"lost", TN_ELOST},
    {"lock_delay", TN_ELOCKDELAY},
    {"payload_too_large", TN_ETOOBIG},
    {"unsupported_media_type", TN_EMEDIA},
    {"request_header_fields_too_large", TN_EHDRTOOBIG},
    {"too_many_requests", TN_ETOOMANY},
    {"unavailable", TN_EUNAVAIL},
    {"capacity", TN_ECAPACITY}, /* 503 with Retry-After: a server limit */
    {"internal", TN_EINTERNAL},
    {"unauthorized", TN_EUNAUTH},
    {"not_implemented", TN_ENOTIMPL},
};

/* When the body has no known code, the status decides. */
static int from_status(long status)
{
    switch (status) {
    case 400:
        return TN_EINVAL;
    case 401:
        return TN_EUNAUTH;
    case 403:
        return TN_EFORBIDDEN;
    case 404:
        return TN_ENOTFOUND;
    case 405:
        return TN_EMETHOD;
    case 409:
        return TN_ECONFLICT;
    case 413:
        return TN_ETOOBIG;
    case 415:
        return TN_EMEDIA;
    case 429:
        return TN_ETOOMANY;
    case 431:
        return TN_EHDRTOOBIG;
    case 501:
        return TN_ENOTIMPL;
    case 503:
        return TN_EUNAVAIL;
    default:
        return status >= 500 ? TN_EINTERNAL : TN_EPROTO;
    }
}

static int from_code(const char *code, long status)
{
    for (size_t i = 0; i < sizeof(err_table) / sizeof(err_table[0]); i++) {
        if (strcmp(err_table[i].code, code) == 0)
            return err_table[i].rc;
    }
    return from_status(status);
}

static void copy_str(json_t *obj, const char *key, char *dst, size_t cap)
{
    const char *s = NULL;
    size_t len = 0;
    dst[0] = '\0';
    if (tn_json_get_str(obj, key, &s, &len, NULL) != TN_OK)
        return;
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, s, len);
    dst[len] = '\0';
}

int tn_client_decode_info(json_t *obj, struct tn_lease_info *out,
                          struct tn_errmsg *em)
{
    memset(out, 0, sizeof(*out));
    out->expires_in_ms = -1;
    out->retry_after_ms = -1;
    if (!json_is_object(obj)) {
        tn_errmsg_set(em, "lease is not a JSON object");
        return TN_EPROTO;
    }
    copy_str(obj, "name", out->name, sizeof(out->name));
    copy_str(obj, "owner_id", out->owner_id, sizeof(out->owner_id));
    int64_t v = 0;
    int rc = tn_json_get_int(obj, "token", 0, INT64_MAX, &v, em);
    if (rc < 0) {
        if (rc == TN_ENOTFOUND)
            tn_errmsg_set(em, "lease without \"token\"");
        return TN_EPROTO;
    }
    out->token = (uint64_t)v;
    rc = tn_json_get_int(obj, "expires_in_ms", INT64_MIN, INT64_MAX, &v, em);
    if (rc == TN_OK)
        out->expires_in_ms = v;
    else if (rc != TN_ENOTFOUND)
        return TN_EPROTO;
    return TN_OK;
}

static void fill_holder(json_t *body, struct tn_lease_info *holder)
{
    json_t *h = json_object_get(body, "holder");
    if (json_is_object(h))
        (void)tn_client_decode_info(h, holder, NULL);
    int64_t v = 0;
    if (tn_json_get_int(body, "retry_after_ms", 0, INT64_MAX, &v, NULL) ==
        TN_OK)
        holder->retry_after_ms = v;
}

int tn_client_map_error(long status, const char *body, size_t len,
                        struct tn_lease_info *holder, struct tn_errmsg *em)
{
    if (holder != NULL) {
        memset(holder, 0, sizeof(*holder));
        holder->expires_in_ms = -1;
        holder->retry_after_ms = -1;
    }
    json_t *obj = NULL;
    int rc = from_status(status);
    if (body == NULL ||
        tn_json_parse_object(body, len, false, &obj, NULL) != TN_OK) {
        tn_errmsg_set(em, "HTTP %ld without a JSON error body", status);
        return rc;
    }
    const char *code = NULL;
    const char *msg = NULL;
    size_t n = 0;
    if (tn_json_get_str(obj, "error", &code, &n, NULL) == TN_OK)
        rc = from_code(code, status);
    if (tn_json_get_str(obj, "message", &msg, &n, NULL) == TN_OK)
        tn_errmsg_set(em, "%s", msg);
    else
        tn_errmsg_set(em, "HTTP %ld %s", status, code != NULL ? code : "");
    if (holder != NULL)
        fill_holder(obj, holder);
    json_decref(obj);
    return rc;
}

int tn_client_decode_session(json_t *obj, struct tn_session_info *out,
                             struct tn_errmsg *em)
{
    memset(out, 0, sizeof(*out));
    out->ttl_ms = -1;
    if (!json_is_object(obj)) {
        tn_errmsg_set(em, "session is not a JSON object");
        return TN_EPROTO;
    }
    copy_str(obj, "session_id", out->session_id, sizeof(out->session_id));
    copy_str(obj, "owner_id", out->owner_id, sizeof(out->owner_id));
    int64_t v = 0;
    if (out->session_id[0] == '\0' ||
        tn_json_get_int(obj, "expires_in_ms", INT64_MIN, INT64_MAX,
                        &out->expires_in_ms, em) < 0) {
        tn_errmsg_set(em, "session without session_id or expires_in_ms");
        return TN_EPROTO;
    }
    if (tn_json_get_int(obj, "ttl_ms", 0, INT64_MAX, &v, NULL) == TN_OK)
        out->ttl_ms = v;
    if (tn_json_get_int(obj, "leases", 0, INT64_MAX, &v, NULL) == TN_OK)
        out->leases = (uint64_t)v;
    return TN_OK;
}

int tn_client_decode_renew(long status, const char *body, size_t len,
                           struct tn_renew_io *io, struct tn_errmsg *em)
{
    if (status != 200)
        return tn_client_map_error(status, body, len, NULL, em);
    json_t *o = NULL;
    if (tn_json_parse_object(body, len, false, &o, em) < 0)
        return TN_EPROTO;
    int rc = TN_OK;
    if (io->ttl_send_ms > 0)
        io->ttl_ms = io->ttl_send_ms;
    (void)tn_json_get_int(o, "ttl_ms", 1, INT64_MAX, &io->ttl_ms, NULL);
    if (tn_json_get_int(o, "expires_in_ms", 0, INT64_MAX, &io->expires_in_ms,
                        em) < 0) {
        tn_errmsg_set(em, "renew answer without expires_in_ms");
        rc = TN_EPROTO;
    }
    json_decref(o);
    return rc;
}

int tn_client_decode_renew_xfer(const struct tn_xfer *x, int64_t ttl_ms,
                                struct tn_renew_io *ro, struct tn_errmsg *em)
{
    *ro = (struct tn_renew_io){.ttl_send_ms = ttl_ms, .ttl_ms = ttl_ms};
    int rc = x->rc;
    if (rc == 0)
        rc = tn_client_decode_renew(x->status, x->resp.data, x->resp.len, ro,
                                    em);
    else
        tn_errmsg_set(em, "%s", x->err);
    ro->sent_ms = x->sent_ms;
    return rc;
}
