/* SPDX-License-Identifier: MIT */
/* Rows and SQLSTATEs into results (result.c). */
#ifndef TN_STORE_PG_RESULT_H
#define TN_STORE_PG_RESULT_H

#include <libpq-fe.h>

#include "store/pg/pg.h"

/* The next result of batch b (for b->ops[b->idx]): parse its rows into the
 * op's result, or record the failure in b. */
void tn_pg_take_result(struct tn_pg_batch *b, PGresult *r);

#endif
