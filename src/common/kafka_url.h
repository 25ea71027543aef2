/* SPDX-License-Identifier: MIT */
/* The URL of a Kafka topic of lease events, read once for the publisher's
 * target (src/publish/kafka.c) and the clients' follower
 * (src/client/events_kafka.c).  On url.h; no I/O. */
#ifndef TN_COMMON_KAFKA_URL_H
#define TN_COMMON_KAFKA_URL_H

#include "url.h"

/* kafka://BROKER[:PORT][,BROKER[:PORT]...]/TOPIC */
struct tn_kafka_url {
    char brokers[1024]; /* as given: librdkafka's bootstrap.servers */
    char topic[256];    /* the topic */
};

/* Parse url (NUL-terminated) into *out: no userinfo, no query, one topic
 * with no '/' in it.  0 or TN_EINVAL. */
int tn_kafka_url_parse(const char *url, struct tn_kafka_url *out);

#endif
