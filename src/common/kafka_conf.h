/* SPDX-License-Identifier: MIT */
/* One librdkafka setting, refused in the house shape.  Every program that
 * speaks Kafka (the fence stamp, the event publisher, the client's event
 * reader, the materializer) sets its configuration through it.  Inline,
 * so that common itself does not link librdkafka: only the files that
 * include this header (and already link it) do. */
#ifndef TN_COMMON_KAFKA_CONF_H
#define TN_COMMON_KAFKA_CONF_H

#include <librdkafka/rdkafka.h>

#include <tenure/err.h>

/* Set k to v in conf: TN_OK, or TN_EINVAL with em saying which setting
 * librdkafka refused and why. */
static inline int tn_kafka_conf_set(rd_kafka_conf_t *conf, const char *k,
                                    const char *v, struct tn_errmsg *em)
{
    char err[256];
    if (rd_kafka_conf_set(conf, k, v, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
        tn_errmsg_set(em, "kafka setting \"%s\": %s", k, err);
        return TN_EINVAL;
    }
    return TN_OK;
}

/* Set the n pairs {key, value} of kv in order, up to the first refusal;
 * TN_OK or that refusal. */
static inline int tn_kafka_conf_set_all(rd_kafka_conf_t *conf,
                                        const char *const (*kv)[2], size_t n,
                                        struct tn_errmsg *em)
{
    int rc = TN_OK;
    for (size_t i = 0; i < n && rc == TN_OK; i++)
        rc = tn_kafka_conf_set(conf, kv[i][0], kv[i][1], em);
    return rc;
}

#endif
