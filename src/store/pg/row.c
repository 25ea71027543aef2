/* SPDX-License-Identifier: MIT */
/* Columns of a PostgreSQL result row as the store's values: numbers,
 * text, secrets (row.h).  Used by the parsers of result.c and
 * result_session.c; no I/O. */
#include "store/pg/row.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "common/rand.h"

int64_t tn_pg_get_i64(const PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return 0;
    return strtoll(PQgetvalue(r, row, col), NULL, 10);
}

void tn_pg_get_str(const PGresult *r, int row, int col, char *out, size_t cap)
{
    (void)snprintf(out, cap, "%s", PQgetvalue(r, row, col));
}

int tn_pg_get_secret(const PGresult *r, int row, int col,
                     uint8_t out[TN_SECRET_BYTES])
{
    const char *hex = PQgetvalue(r, row, col);
    if (PQgetisnull(r, row, col) || strncmp(hex, "\\x", 2) != 0 ||
        tn_hex_decode(hex + 2, strlen(hex + 2), out, TN_SECRET_BYTES) < 0)
        return TN_EINTERNAL;
    return TN_OK;
}
