/* SPDX-License-Identifier: MIT */
/* One publisher per PostgreSQL cluster.  Every tenured on the same
 * database hears every event (NOTIFY) and logs it, but only the instance
 * holding a session advisory lock sends: the lock's session also keeps,
 * per target, the highest id any publisher may have used (tenure_publish,
 * reserved ahead in steps), so a new publisher's ids start above
 * everything an old one could still send.  A change of publisher gives
 * one reset record (the new one cannot know what the old one had sent).
 * Called from the publisher's threads; one mutex guards the connection. */
#include "leader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/log.h"

/* "tenurepb" as a number: the advisory lock's key. */
#define LOCK_KEY "8387236823466603618"
#define RESERVE_STEP 10000

int tn_pub_leader_init(struct tn_pub_leader *l, const char *conninfo)
{
    memset(l, 0, sizeof(*l));
    (void)pthread_mutex_init(&l->mu, NULL);
    l->conninfo = tn_strdup(conninfo);
    return l->conninfo != NULL ? TN_OK : TN_ENOMEM;
}

void tn_pub_leader_release(struct tn_pub_leader *l)
{
    if (l->conn != NULL)
        PQfinish(l->conn);
    tn_free(l->conninfo);
    (void)pthread_mutex_destroy(&l->mu);
    memset(l, 0, sizeof(*l));
}

static bool exec_ok(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);
    PQclear(r);
    return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

static void lose(struct tn_pub_leader *l, const char *why)
{
    if (atomic_load(&l->leader))
        tn_log(TN_LOG_WARN, "publish",
               "\"no longer the cluster's publisher\" why=\"%s\"", why);
    atomic_store(&l->leader, false);
    if (l->conn != NULL)
        PQfinish(l->conn);
    l->conn = NULL;
}

void tn_pub_leader_tick(struct tn_pub_leader *l, uint64_t head)
{
    (void)pthread_mutex_lock(&l->mu);
    if (l->conn == NULL) {
        const char *keys[] = {"dbname", "connect_timeout", NULL};
        const char *vals[] = {l->conninfo, "2", NULL};
        l->conn = PQconnectdbParams(keys, vals, 1);
        if (PQstatus(l->conn) != CONNECTION_OK ||
            !exec_ok(l->conn, "CREATE TABLE IF NOT EXISTS tenure_publish("
                              "target text PRIMARY KEY, hi bigint NOT NULL)")) {
            lose(l, "cannot connect");
            goto out;
        }
    }
    if (atomic_load(&l->leader)) {
        if (!exec_ok(l->conn, "SELECT 1"))
            lose(l, "connection lost");
        goto out;
    }
    PGresult *r = PQexec(l->conn, "SELECT pg_try_advisory_lock(" LOCK_KEY ")");
    bool got = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
               strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    bool failed = PQresultStatus(r) != PGRES_TUPLES_OK;
    PQclear(r);
    if (failed) {
        lose(l, "lock query failed");
    } else if (got) {
        atomic_store(&l->term_head, head);
        atomic_fetch_add(&l->term, 1);
        atomic_store(&l->leader, true);
        tn_log(TN_LOG_INFO, "publish",
               "\"this instance publishes the "
               "cluster's events\"");
    }
out:
    (void)pthread_mutex_unlock(&l->mu);
}

int tn_pub_leader_begin(struct tn_pub_leader *l, const char *target,
                        uint64_t *hi)
{
    int rc = TN_EUNAVAIL;
    (void)pthread_mutex_lock(&l->mu);
    if (!atomic_load(&l->leader) || l->conn == NULL)
        goto out;
    const char *v[] = {target};
    PGresult *r = PQexecParams(
        l->conn,
        "INSERT INTO tenure_publish(target, hi) VALUES($1, 0) "
        "ON CONFLICT (target) DO UPDATE SET hi = tenure_publish.hi "
        "RETURNING hi",
        1, NULL, v, NULL, NULL, 0);
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        *hi = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
        rc = TN_OK;
    }
    PQclear(r);
    if (rc < 0)
        lose(l, "cannot read the publish table");
out:
    (void)pthread_mutex_unlock(&l->mu);
    return rc;
}

int tn_pub_leader_reserve(struct tn_pub_leader *l, const char *target,
                          uint64_t upto, uint64_t *reserved)
{
    if (upto <= *reserved)
        return atomic_load(&l->leader) ? TN_OK : TN_EUNAVAIL;
    int rc = TN_EUNAVAIL;
    (void)pthread_mutex_lock(&l->mu);
    if (!atomic_load(&l->leader) || l->conn == NULL)
        goto out;
    char n[24];
    uint64_t want = upto + RESERVE_STEP;
    (void)snprintf(n, sizeof(n), "%llu", (unsigned long long)want);
    const char *v[] = {target, n};
    PGresult *r =
        PQexecParams(l->conn,
                     "UPDATE tenure_publish SET hi = GREATEST(hi, $2::bigint) "
                     "WHERE target = $1",
                     2, NULL, v, NULL, NULL, 0);
    if (PQresultStatus(r) == PGRES_COMMAND_OK) {
        *reserved = want;
        rc = TN_OK;
    }
    PQclear(r);
    if (rc < 0)
        lose(l, "cannot reserve ids");
out:
    (void)pthread_mutex_unlock(&l->mu);
    return rc;
}
