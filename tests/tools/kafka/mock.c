/* SPDX-License-Identifier: MIT */
/* tn-kafka-mock: runs librdkafka's mock cluster for the tests.  Creates
 * the topics named on the command line (NAME:PARTITIONS), prints the
 * bootstrap list as one line on stdout, then lives until SIGTERM/SIGINT or,
 * with --stdin, until stdin closes.  With --stdin it also takes commands,
 * one per line: "errors APIKEY ERRCODE COUNT" pushes request errors (the
 * mock's only way to emulate broker-side fencing), "topic NAME PARTS". */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop = 0;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int create_topic(rd_kafka_mock_cluster_t *mc, const char *spec)
{
    char name[256];
    const char *colon = strrchr(spec, ':');
    long parts = 1;
    size_t len = strlen(spec);
    if (colon != NULL) {
        char *end = NULL;
        parts = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end != '\0' || parts < 1 || parts > 1000)
            return -1;
        len = (size_t)(colon - spec);
    }
    if (len == 0 || len >= sizeof(name))
        return -1;
    memcpy(name, spec, len);
    name[len] = '\0';
    if (rd_kafka_mock_topic_create(mc, name, (int)parts, 1) !=
        RD_KAFKA_RESP_ERR_NO_ERROR)
        return -1;
    return 0;
}

static void command(rd_kafka_mock_cluster_t *mc, char *line)
{
    long api = 0;
    long err = 0;
    long count = 0;
    char name[300];
    if (sscanf(line, "errors %ld %ld %ld", &api, &err, &count) == 3) {
        for (long i = 0; i < count; i++)
            rd_kafka_mock_push_request_errors(mc, (int16_t)api, 1,
                                              (rd_kafka_resp_err_t)err);
        printf("ok errors\n");
    } else if (sscanf(line, "topic %299s", name) == 1) {
        printf(create_topic(mc, name) == 0 ? "ok topic\n" : "error topic\n");
    } else {
        printf("error unknown command\n");
    }
    (void)fflush(stdout);
}

int main(int argc, char **argv)
{
    int use_stdin = 0;
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "--stdin") == 0) {
        use_stdin = 1;
        first = 2;
    }
    if (argc > 1 && strcmp(argv[1], "--help") == 0) {
        printf("usage: tn-kafka-mock [--stdin] TOPIC:PARTITIONS...\n");
        return 0;
    }
    char err[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (rk == NULL) {
        (void)fprintf(stderr, "tn-kafka-mock: %s\n", err);
        return 1;
    }
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, 1);
    if (mc == NULL) {
        (void)fprintf(stderr, "tn-kafka-mock: cannot start the mock cluster\n");
        rd_kafka_destroy(rk);
        return 1;
    }
    int rc = 0;
    for (int i = first; i < argc && rc == 0; i++) {
        rc = create_topic(mc, argv[i]);
        if (rc != 0)
            (void)fprintf(stderr, "tn-kafka-mock: bad topic \"%s\"\n", argv[i]);
    }
    (void)signal(SIGTERM, on_signal);
    (void)signal(SIGINT, on_signal);
    if (rc == 0) {
        printf("%s\n", rd_kafka_mock_cluster_bootstraps(mc));
        (void)fflush(stdout);
    }
    char line[512];
    while (rc == 0 && !stop) {
        if (!use_stdin) {
            pause();
            continue;
        }
        if (fgets(line, sizeof(line), stdin) == NULL)
            break;
        command(mc, line);
    }
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return rc == 0 ? 0 : 1;
}
