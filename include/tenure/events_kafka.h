/* SPDX-License-Identifier: MIT */
/* libtenure-kafka: follow the Kafka topic that tenured --publish
 * kafka://BROKERS/TOPIC fills, instead of GET /v1/events, for a client's
 * kept leases: an event that ends a kept lease marks it lost at once (its
 * keepalive reports the loss), and a "reset" record, or a jump in the
 * events' ids, renews every kept lease at once (the SSE follower's reset
 * rule).  Repeated ids (the publisher delivers at least once) are skipped.
 * The id rule needs the whole stream in one order, so it applies only to
 * a topic of one partition; with more, only reset records count.  A
 * latency aid, like every follower: safety stays with the fence.
 * Link -ltenure-kafka (it links librdkafka; libtenure does not). */
#ifndef TENURE_EVENTS_KAFKA_H
#define TENURE_EVENTS_KAFKA_H

#include <stddef.h>

#include <tenure/client.h>
#include <tenure/err.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tn_kafka_follower;

/* Start following url, "kafka://BROKER[,BROKER...]/TOPIC", for c (one
 * thread, one librdkafka consumer without a group: every partition is
 * read from its end at start, like a new SSE subscriber).  conf[0..n_conf)
 * are "key=value" librdkafka settings (TLS, SASL: security.protocol,
 * ssl.ca.location, sasl.mechanism, ...), copied.  Create the client without
 * watch_events (or it follows the SSE stream as well, which is harmless).
 * 0 and *out, TN_EINVAL (bad url or setting, detail in em), TN_ENOMEM,
 * TN_EIO (no thread).  The topic need not exist yet.  Thread-safe. */
TN_EXTERN int tn_kafka_follower_start(struct tn_client *c, const char *url,
                                      const char *const *conf, size_t n_conf,
                                      struct tn_kafka_follower **out,
                                      struct tn_errmsg *em);

/* Stop and free (within about 200 ms); call it before tn_client_free.
 * NULL is a no-op.  Not concurrently with other calls on f. */
TN_EXTERN void tn_kafka_follower_stop(struct tn_kafka_follower *f);

#ifdef __cplusplus
}
#endif
#endif
