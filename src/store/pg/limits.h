/* SPDX-License-Identifier: MIT */
/* --max-leases, --max-names and --max-sessions on PostgreSQL (limits.c). */
#ifndef TN_STORE_PG_LIMITS_H
#define TN_STORE_PG_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "store/pg/pg.h"

/* Take the limits from cfg; true when at least one is set (the database
 * then needs counting: tn_pg_limits_count_sent / _counted). */
bool tn_pg_limits_init(struct tn_pg *p, const struct tn_store_config *cfg);
/* op is about to be sent: set what it carries of the estimate (an
 * acquire's $8, a claim's room, an open's $6), and count it (as a grant,
 * a claim as a grant of each of its names, an open as a session) until
 * it is answered (or sent again).  Other statements: nothing. */
void tn_pg_limits_stamp(struct tn_pg *p, struct tn_pg_op *op);
/* Whether the estimate is usable: no limit is set, or the database has
 * been counted once (until then every grant is refused, so a restarted
 * instance never grants past a limit; the store is not ready). */
bool tn_pg_limits_counted_once(const struct tn_pg *p);
/* op goes back to the queue, to be sent again: no longer in flight. */
void tn_pg_limits_unreserve(struct tn_pg *p, struct tn_pg_op *op);
/* op is answered with op->out: a grant adds a live lease (and a name when
 * it inserted one), a release takes one away; a claim adds its grants, a
 * batch release takes its releases away; an open adds a session, an end
 * takes it and its leases away. */
void tn_pg_limits_answered(struct tn_pg *p, struct tn_pg_op *op);
/* A count of the database is being sent / came back in p->limits.result.
 * The delay until the next count, in ms. */
void tn_pg_limits_count_sent(struct tn_pg *p);
int64_t tn_pg_limits_counted(struct tn_pg *p);
void tn_pg_limits_metrics(struct tn_pg *p, struct tn_buf *out);

#endif
