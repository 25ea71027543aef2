/* SPDX-License-Identifier: MIT */
/* tn-worker: a worker as in the incident.  Acquires a lease from tenured
 * over HTTP, optionally claims (claim record, then waits until the
 * materializer has committed past it), then writes --writes stamped records
 * --interval-ms apart with the token it got, never checking again: frozen
 * and resumed, it writes with its old token, as the zombie did.  Prints one
 * line per step on stdout (line-buffered) for the test to follow. */
#include <curl/curl.h>
#include <getopt.h>
#include <jansson.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tenure/fence_kafka.h>

#include "common/buf.h"
#include "common/clock.h"

struct opts {
    const char *server;  /* tenured base URL */
    const char *brokers; /* bootstrap list */
    const char *topic;   /* raw topic */
    const char *name;    /* lease name */
    const char *owner;   /* owner_id */
    const char *sink;    /* for claim-before-read, or NULL */
    long ttl_ms;         /* lease TTL */
    long writes;         /* records to write */
    long interval_ms;    /* pause between writes */
    bool claim;          /* claim before writing */
    FILE *history;       /* tenure-check history of acquires, or NULL */
};

struct grant {
    uint64_t token;                   /* fencing token */
    char proof[TN_PROOF_HEX_LEN + 1]; /* "" when the server does not sign */
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
    return tn_buf_append(ud, p, sz * n) == 0 ? sz * n : 0;
}

static void nap_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int parse_grant(const char *body, struct grant *g)
{
    json_t *j = json_loads(body, 0, NULL);
    json_t *tok = json_object_get(j, "token");
    json_t *proof = json_object_get(j, "proof");
    int rc = json_is_integer(tok) ? 0 : -1;
    if (rc == 0)
        g->token = (uint64_t)json_integer_value(tok);
    g->proof[0] = '\0';
    if (rc == 0 && json_is_string(proof) &&
        strlen(json_string_value(proof)) == TN_PROOF_HEX_LEN)
        memcpy(g->proof, json_string_value(proof), TN_PROOF_HEX_LEN + 1);
    json_decref(j);
    return rc;
}

/* One acquire event in the history format of tenure-check. */
static void history(const struct opts *o, const char *phase, long code,
                    uint64_t token)
{
    if (o->history == NULL)
        return;
    json_t *e = json_pack("{s:I,s:s,s:s,s:s,s:s}", "t",
                          (json_int_t)tn_clock_mono_ns(), "proc", o->owner,
                          "op", "acquire", "phase", phase, "name", o->name);
    if (strcmp(phase, "invoke") == 0)
        json_object_set_new(e, "ttl_ms", json_integer(o->ttl_ms));
    if (code == 201)
        json_object_set_new(e, "token", json_integer((json_int_t)token));
    char *line = json_dumps(e, JSON_COMPACT);
    if (line != NULL) {
        (void)fprintf(o->history, "%s\n", line);
        (void)fflush(o->history);
    }
    free(line);
    json_decref(e);
}

/* POST /v1/leases once; 201 fills g.  Returns the HTTP status or -1. */
static long try_acquire(const struct opts *o, struct grant *g)
{
    char url[512];
    char body[1024];
    (void)snprintf(url, sizeof(url), "%s/v1/leases", o->server);
    (void)snprintf(body, sizeof(body),
                   "{\"name\":\"%s\",\"owner_id\":\"%s\",\"ttl_ms\":%ld}",
                   o->name, o->owner, o->ttl_ms);
    struct tn_buf resp;
    tn_buf_init(&resp, 1u << 16);
    CURL *c = curl_easy_init();
    struct curl_slist *h =
        curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &resp);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
    long code = -1;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (code == 201 && (resp.data == NULL || parse_grant(resp.data, g) < 0))
        code = -1;
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    tn_buf_release(&resp);
    return code;
}

static int acquire(const struct opts *o, struct grant *g)
{
    int64_t deadline = tn_clock_mono_ms() + 60000;
    while (tn_clock_mono_ms() < deadline) {
        history(o, "invoke", 0, 0);
        long code = try_acquire(o, g);
        history(o, code == 201 ? "ok" : (code == 409 ? "fail" : "info"), code,
                code == 201 ? g->token : 0);
        if (code == 201)
            return 0;
        if (code != 409) {
            (void)fprintf(stderr, "tn-worker: acquire failed: HTTP %ld\n",
                          code);
            return -1;
        }
        nap_ms(100);
    }
    return -1;
}

static int write_one(rd_kafka_t *rk, const struct opts *o,
                     const struct grant *g, bool claim, const char *value,
                     int32_t *part, int64_t *off)
{
    struct tn_fence_write w = {.topic = o->topic,
                               .name = o->name,
                               .name_len = strlen(o->name),
                               .token = g->token,
                               .proof_hex = g->proof[0] ? g->proof : NULL,
                               .claim = claim,
                               .value = value,
                               .value_len = strlen(value)};
    struct tn_errmsg em = {{0}};
    int rc = tn_fence_produce_sync(rk, &w, 30000, part, off, &em);
    if (rc < 0)
        (void)fprintf(stderr, "tn-worker: %s\n", em.text);
    return rc;
}

static int claim_and_wait(rd_kafka_t *rk, const struct opts *o,
                          const struct grant *g)
{
    int32_t part = 0;
    int64_t off = 0;
    char value[128];
    (void)snprintf(value, sizeof(value), "%s claims", o->owner);
    if (write_one(rk, o, g, true, value, &part, &off) < 0)
        return -1;
    printf("%s: claim record at partition %d offset %lld\n", o->owner,
           (int)part, (long long)off);
    struct tn_errmsg em = {{0}};
    if (tn_fence_wait_committed(o->sink, o->topic, part, off, 30000, &em) < 0) {
        (void)fprintf(stderr, "tn-worker: %s\n", em.text);
        return -1;
    }
    printf("%s: materializer committed past the claim; safe to read state\n",
           o->owner);
    return 0;
}

static int run(const struct opts *o)
{
    struct grant g;
    if (acquire(o, &g) < 0)
        return 1;
    printf("%s: acquired %s token=%llu%s\n", o->owner, o->name,
           (unsigned long long)g.token, g.proof[0] ? " (signed)" : "");
    struct tn_errmsg em = {{0}};
    rd_kafka_t *rk = tn_fence_producer_new(o->brokers, NULL, &em);
    if (rk == NULL) {
        (void)fprintf(stderr, "tn-worker: %s\n", em.text);
        return 1;
    }
    int rc = o->claim ? claim_and_wait(rk, o, &g) : 0;
    for (long i = 1; i <= o->writes && rc == 0; i++) {
        char value[128];
        (void)snprintf(value, sizeof(value), "%s write %ld", o->owner, i);
        int32_t part = 0;
        int64_t off = 0;
        rc = write_one(rk, o, &g, false, value, &part, &off);
        if (rc == 0)
            printf("%s: wrote \"%s\" token=%llu at partition %d offset %lld\n",
                   o->owner, value, (unsigned long long)g.token, (int)part,
                   (long long)off);
        if (rc == 0 && i < o->writes)
            nap_ms(o->interval_ms);
    }
    rd_kafka_flush(rk, 10000);
    rd_kafka_destroy(rk);
    return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"server", required_argument, NULL, 'S'},
        {"brokers", required_argument, NULL, 'b'},
        {"topic", required_argument, NULL, 't'},
        {"name", required_argument, NULL, 'n'},
        {"owner", required_argument, NULL, 'o'},
        {"ttl-ms", required_argument, NULL, 'l'},
        {"writes", required_argument, NULL, 'w'},
        {"interval-ms", required_argument, NULL, 'i'},
        {"claim", no_argument, NULL, 'c'},
        {"sink", required_argument, NULL, 's'},
        {"history", required_argument, NULL, 'H'},
        {NULL, 0, NULL, 0},
    };
    struct opts o = {.ttl_ms = 2000, .writes = 1, .interval_ms = 200};
    int c = 0;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 'S':
            o.server = optarg;
            break;
        case 'b':
            o.brokers = optarg;
            break;
        case 't':
            o.topic = optarg;
            break;
        case 'n':
            o.name = optarg;
            break;
        case 'o':
            o.owner = optarg;
            break;
        case 'l':
            o.ttl_ms = strtol(optarg, NULL, 10);
            break;
        case 'w':
            o.writes = strtol(optarg, NULL, 10);
            break;
        case 'i':
            o.interval_ms = strtol(optarg, NULL, 10);
            break;
        case 'c':
            o.claim = true;
            break;
        case 's':
            o.sink = optarg;
            break;
        case 'H':
            o.history = fopen(optarg, "a");
            if (o.history == NULL)
                return 2;
            break;
        default:
            return 2;
        }
    }
    if (o.server == NULL || o.brokers == NULL || o.topic == NULL ||
        o.name == NULL || o.owner == NULL || (o.claim && o.sink == NULL)) {
        (void)fprintf(stderr,
                      "usage: tn-worker --server URL --brokers B --topic T"
                      " --name N --owner O [--ttl-ms MS] [--writes K]"
                      " [--interval-ms MS] [--claim --sink SPEC]"
                      " [--history FILE]\n");
        return 2;
    }
    (void)setvbuf(stdout, NULL, _IOLBF, 0);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = run(&o);
    curl_global_cleanup();
    if (o.history != NULL)
        (void)fclose(o.history);
    return rc;
}
