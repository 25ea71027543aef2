/* SPDX-License-Identifier: MIT */
/* Rows and SQLSTATEs into results (result.c). */
#ifndef TN_STORE_PG_RESULT_H
#define TN_STORE_PG_RESULT_H

#include <libpq-fe.h>

#include "store/pg/pg.h"

/* What a session refusal says (tn_store_result.reason). */
#define TN_PG_SESSION_ENDED "the session has ended"
#define TN_PG_RENEW_THE_SESSION                                                \
    "this lease is held under a session: renew the session"

/* The next result of batch b (for b->ops[b->idx]): parse its rows into the
 * op's result, or record the failure in b. */
void tn_pg_take_result(struct tn_pg_batch *b, PGresult *r);

/* The rows of a session statement into op's result (result_session.c). */
void tn_pg_parse_session(struct tn_pg_op *op, const PGresult *r);

#endif
