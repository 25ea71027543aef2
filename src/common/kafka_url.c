/* SPDX-License-Identifier: MIT */
/* Kafka topic URLs (kafka_url.h), on url.c's parser. */
#include "kafka_url.h"

#include <string.h>

#include <tenure/err.h>

int tn_kafka_url_parse(const char *url, struct tn_kafka_url *out)
{
    memset(out, 0, sizeof(*out));
    struct tn_url u;
    int rc = tn_url_parse(url, strlen(url), 9092, TN_URL_HOST_LIST, &u);
    if (rc < 0 || !tn_url_is_scheme(&u, "kafka") || u.user != NULL ||
        u.query != NULL || u.path == NULL || u.path_len < 2 ||
        memchr(u.path + 1, '/', u.path_len - 1) != NULL ||
        u.authority_len >= sizeof(out->brokers) ||
        u.path_len - 1 >= sizeof(out->topic))
        return TN_EINVAL;
    memcpy(out->brokers, u.authority, u.authority_len);
    memcpy(out->topic, u.path + 1, u.path_len - 1);
    return TN_OK;
}
