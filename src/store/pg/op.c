/* SPDX-License-Identifier: MIT */
/* The PostgreSQL store's statements to run: an op carries one prepared
 * statement (src/store/pg/sql.c) and its text parameters, copied from the
 * request, with the caller's result and completion. */
#include "store/pg/op.h"

#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/map.h"
#include "common/rand.h"

void tn_pg_op_free(struct tn_pg_op *op)
{
    tn_free(op->name);
    tn_free(op->s2);
    tn_free(op->s3);
    tn_free(op->s4);
    tn_free(op->sess);
    for (size_t i = 0; i < sizeof(op->arrays) / sizeof(op->arrays[0]); i++)
        tn_free(op->arrays[i]);
    tn_free(op->names);
    tn_free(op);
}

struct tn_pg_op *tn_pg_op_new(enum tn_pg_stmt stmt, const char *name,
                              size_t name_len, struct tn_store_result *out)
{
    struct tn_pg_op *op = tn_calloc(1, sizeof(*op));
    if (op == NULL)
        return NULL;
    op->stmt = stmt;
    op->out = out;
    op->name = tn_strndup(name, name_len);
    if (op->name == NULL) {
        tn_free(op);
        return NULL;
    }
    op->values[0] = op->name;
    return op;
}

void tn_pg_op_bytea(char out[3 + 2 * TN_SECRET_BYTES], const uint8_t *secret)
{
    out[0] = '\\';
    out[1] = 'x';
    tn_hex_encode(secret, TN_SECRET_BYTES, out + 2);
}

static void set_secret(struct tn_pg_op *op, const uint8_t *secret)
{
    tn_pg_op_bytea(op->secret_hex, secret);
}

/* A copy of s, or NULL for NULL; *ok turns false when out of memory. */
static char *dup_opt(const char *s, bool *ok)
{
    if (s == NULL)
        return NULL;
    char *d = tn_strdup(s);
    if (d == NULL)
        *ok = false;
    return d;
}

struct tn_pg_op *tn_pg_op_acquire(const struct tn_acquire_req *r,
                                  struct tn_store_result *out)
{
    struct tn_pg_op *op = tn_pg_op_new(
        r->session_id != NULL ? TN_PG_ACQUIRE_SESSION : TN_PG_ACQUIRE, r->name,
        r->name_len, out);
    if (op != NULL) {
        bool ok = true;
        op->s2 = dup_opt(r->owner_id, &ok);
        op->s3 = dup_opt(r->request_id, &ok);
        op->s4 = dup_opt(r->principal, &ok);
        op->sess = dup_opt(r->session_id, &ok);
        if (!ok || op->s2 == NULL) {
            tn_pg_op_free(op);
            op = NULL;
        }
    }
    if (op != NULL) {
        memcpy(op->secret, r->secret, TN_SECRET_BYTES);
        set_secret(op, r->secret);
        (void)snprintf(op->n1, sizeof(op->n1), "%lld", (long long)r->ttl_ms);
        (void)snprintf(op->n2, sizeof(op->n2), "%lld",
                       (long long)r->lock_delay_ms);
        const char *v[] = {op->name, op->s2,         op->n1, op->n2,
                           op->s3,   op->secret_hex, op->s4};
        memcpy(op->values, v, sizeof(v));
    }
    if (op != NULL && op->sess != NULL) {
        /* $8 is the limits' (tn_pg_limits_stamp); $9, $10 the session */
        tn_pg_op_bytea(op->sess_hex, r->session_secret);
        op->values[8] = op->sess;
        op->values[9] = op->sess_hex;
        op->sess_hash = tn_pg_op_hash(op->sess);
    }
    return op;
}

uint32_t tn_pg_op_hash(const char *s)
{
    return tn_map_hash(s, strlen(s)); /* keyed: names come from clients */
}

struct tn_pg_op *tn_pg_op_token(enum tn_pg_stmt stmt,
                                const struct tn_token_req *r,
                                struct tn_store_result *out)
{
    struct tn_pg_op *op = tn_pg_op_new(stmt, r->name, r->name_len, out);
    bool ok = true;
    if (op != NULL)
        op->s3 = dup_opt(r->principal, &ok);
    if (!ok) {
        tn_pg_op_free(op);
        op = NULL;
    }
    if (op != NULL) {
        op->token = r->token;
        set_secret(op, r->secret);
        (void)snprintf(op->n1, sizeof(op->n1), "%llu",
                       (unsigned long long)r->token);
        if (stmt == TN_PG_RENEW)
            (void)snprintf(op->n2, sizeof(op->n2), "%lld",
                           (long long)r->ttl_ms);
        else
            (void)snprintf(op->n2, sizeof(op->n2), "%s",
                           r->force ? "true" : "false");
        const char *v[] = {op->name, op->n1, op->secret_hex, op->n2, op->s3};
        memcpy(op->values, v, sizeof(v));
    }
    return op;
}
