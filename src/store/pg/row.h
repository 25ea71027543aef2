/* SPDX-License-Identifier: MIT */
/* Columns of a result row (row.c). */
#ifndef TN_STORE_PG_ROW_H
#define TN_STORE_PG_ROW_H

#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "lease/lease.h"

/* Column col of row as a number (0 when NULL), as text (cut to cap), as
 * a secret ("\\x" and hex digits: 0, or TN_EINTERNAL). */
int64_t tn_pg_get_i64(const PGresult *r, int row, int col);
void tn_pg_get_str(const PGresult *r, int row, int col, char *out, size_t cap);
int tn_pg_get_secret(const PGresult *r, int row, int col,
                     uint8_t out[TN_SECRET_BYTES]);

#endif
