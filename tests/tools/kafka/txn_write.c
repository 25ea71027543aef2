/* SPDX-License-Identifier: MIT */
/* tn-txn-write: writes stamped records through the broker-native layer
 * (one Kafka transaction per record, transactional.id from the lease
 * name).  Prints "txn-id ID", then "committed N" or "fenced: ..." and exits
 * 0 (all committed), 4 (fenced by the broker: lease lost) or 1. */
#include <getopt.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/fence_kafka.h>

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"brokers", required_argument, NULL, 'b'},
        {"topic", required_argument, NULL, 't'},
        {"name", required_argument, NULL, 'n'},
        {"token", required_argument, NULL, 'T'},
        {"count", required_argument, NULL, 'c'},
        {NULL, 0, NULL, 0},
    };
    const char *brokers = NULL;
    const char *topic = NULL;
    const char *name = NULL;
    uint64_t token = 0;
    long count = 1;
    int o = 0;
    while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (o == 'b')
            brokers = optarg;
        else if (o == 't')
            topic = optarg;
        else if (o == 'n')
            name = optarg;
        else if (o == 'T')
            token = strtoull(optarg, NULL, 10);
        else if (o == 'c')
            count = strtol(optarg, NULL, 10);
        else
            return 2;
    }
    if (brokers == NULL || topic == NULL || name == NULL) {
        (void)fprintf(stderr,
                      "usage: tn-txn-write --brokers B --topic T --name N"
                      " --token K [--count C]\n");
        return 2;
    }
    (void)setvbuf(stdout, NULL, _IOLBF, 0);
    char id[300];
    if (tn_fence_txn_id(name, strlen(name), id, sizeof(id)) < 0)
        return 2;
    printf("txn-id %s\n", id);
    struct tn_errmsg em = {{0}};
    rd_kafka_t *rk =
        tn_fence_txn_producer_new(brokers, name, strlen(name), 10000, &em);
    if (rk == NULL) {
        printf("fenced: %s\n", em.text);
        return 4;
    }
    int rc = 0;
    long n = 0;
    for (; n < count && rc == 0; n++) {
        char value[64];
        (void)snprintf(value, sizeof(value), "txn write %ld", n + 1);
        struct tn_fence_write w = {.topic = topic,
                                   .name = name,
                                   .name_len = strlen(name),
                                   .token = token,
                                   .value = value,
                                   .value_len = strlen(value)};
        rc = tn_fence_txn_produce(rk, &w, 10000, &em);
    }
    if (rc == 0)
        printf("committed %ld\n", n);
    else
        printf("%s: %s\n", rc == TN_ELOST ? "fenced" : "failed", em.text);
    rd_kafka_destroy(rk);
    return rc == 0 ? 0 : (rc == TN_ELOST ? 4 : 1);
}
