/* SPDX-License-Identifier: MIT */
/* Rows of the session statements into results (result_session.c), and
 * what a session refusal says (tn_store_result.reason). */
#ifndef TN_STORE_PG_RESULT_SESSION_H
#define TN_STORE_PG_RESULT_SESSION_H

#include <libpq-fe.h>

#include "store/pg/pg.h"

#define TN_PG_SESSION_ENDED "the session has ended"
#define TN_PG_RENEW_THE_SESSION                                                \
    "this lease is held under a session: renew the session"

/* The rows of a session statement into op's result. */
void tn_pg_parse_session(struct tn_pg_op *op, const PGresult *r);

#endif
