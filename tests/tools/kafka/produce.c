/* SPDX-License-Identifier: MIT */
/* tn-produce: writes raw records, honest or forged, for the fence tests.
 * One record from flags, or --gen SEED --count N: a deterministic mix of
 * honest writes, claims, stale, malformed, unsigned and keyless records
 * over a few lease names (the same seed always gives the same records;
 * --names K spreads them over K names and --partitions P puts name i in
 * partition i mod P, for benchmarks over evenly filled partitions).
 * Prints "partition offset" for each record written. */
#include <getopt.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/fence.h>

struct opts {
    const char *brokers;     /* bootstrap list */
    const char *topic;       /* target topic */
    const char *key;         /* NULL: no key */
    const char *token;       /* raw lease-token text, NULL: none */
    const char *proof;       /* raw lease-proof text, NULL: none */
    const char *signing_key; /* sign (key, token) with this file */
    const char *value;       /* payload */
    bool claim;              /* add lease-claim: 1 */
    unsigned long long seed; /* --gen seed */
    long count;              /* --gen count, 0 = single record */
    long names;              /* --gen over this many names, 0 = the 5 */
    long partitions;         /* --gen: name index mod this, 0 = hashed */
};

struct rec {
    const char *key;   /* NULL: none */
    const char *token; /* NULL: none */
    const char *proof; /* NULL: none */
    bool claim;        /* claim header */
    const char *value; /* payload */
    int32_t partition; /* RD_KAFKA_PARTITION_UA: the partitioner's */
};

static int produce(rd_kafka_t *rk, const char *topic, const struct rec *r)
{
    rd_kafka_headers_t *h = rd_kafka_headers_new(3);
    if (r->token != NULL)
        rd_kafka_header_add(h, TN_FENCE_HDR_TOKEN, -1, r->token, -1);
    if (r->proof != NULL)
        rd_kafka_header_add(h, TN_FENCE_HDR_PROOF, -1, r->proof, -1);
    if (r->claim)
        rd_kafka_header_add(h, TN_FENCE_HDR_CLAIM, -1, "1", 1);
    const char *key = r->key;
    size_t key_len = key != NULL ? strlen(key) : 0;
    const char *value = r->value;
    size_t value_len = strlen(value);
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, key_len),
        RD_KAFKA_V_VALUE((void *)(uintptr_t)value, value_len),
        RD_KAFKA_V_PARTITION(r->partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(h),
        RD_KAFKA_V_END);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        rd_kafka_headers_destroy(h);
        if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
            return 1;
        (void)fprintf(stderr, "tn-produce: %s\n", rd_kafka_err2str(err));
        return -1;
    }
    return 0;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m,
                        void *opaque)
{
    (void)rk;
    int *failed = opaque;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        (void)fprintf(stderr, "tn-produce: delivery: %s\n",
                      rd_kafka_err2str(m->err));
        (*failed)++;
        return;
    }
    printf("%d %lld\n", (int)m->partition, (long long)m->offset);
}

static uint64_t next_rand(uint64_t *s)
{
    /* xorshift64*: deterministic per seed, good enough for test data. */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* The lease names of --gen: five fixed ones, or with --names N the names
 * "bench:0".."bench:N-1" (so that keyed records spread over partitions). */
struct names {
    long n;        /* names */
    long parts;    /* > 0: name i goes to partition i mod parts */
    char (*s)[32]; /* generated names, NULL for the fixed five */
};

static const char *name_at(const struct names *nm, unsigned long i)
{
    static const char *const fixed[] = {"shard:1", "shard:2", "shard:8841",
                                        "orders:eu", "orders:us"};
    return nm->s != NULL ? nm->s[i] : fixed[i];
}

/* One generated record into r (strings in bufs). */
static void gen_one(uint64_t *s, long i, uint64_t *tokens, const uint8_t *sk,
                    const struct names *nm, struct rec *r, char *tok,
                    char *proof, char *val)
{
    memset(r, 0, sizeof(*r));
    r->partition = RD_KAFKA_PARTITION_UA;
    unsigned long which = (unsigned long)(next_rand(s) % (uint64_t)nm->n);
    unsigned kind = (unsigned)(next_rand(s) % 100);
    r->key = name_at(nm, which);
    uint64_t t = tokens[which];
    if (kind < 10) {
        tokens[which] = t + 1 + next_rand(s) % 3; /* a new holder claims */
        t = tokens[which];
        r->claim = true;
    } else if (kind < 20) {
        t = t > 3 ? t - 1 - next_rand(s) % 3 : 0; /* a zombie writes */
    }
    (void)snprintf(tok, 24, "%llu", (unsigned long long)t);
    r->token = tok;
    if (kind >= 20 && kind < 23)
        r->token = NULL;
    else if (kind >= 23 && kind < 26)
        r->token =
            kind == 23 ? "+5" : (kind == 24 ? "12x" : "9007199254740993");
    else if (kind == 26)
        r->key = NULL;
    else if (kind == 27)
        r->key = "bad\x01key";
    if (sk != NULL && r->key != NULL && r->token != NULL && kind != 28 &&
        tn_proof_sign(sk, r->key, strlen(r->key), t, proof) == 0)
        r->proof = proof;
    (void)snprintf(val, 64, "record %ld", i);
    r->value = val;
    /* Every record of a name in one partition, as the hash would do. */
    if (nm->parts > 0)
        r->partition =
            (int32_t)(r->key == NULL
                          ? (unsigned long)i % (unsigned long)nm->parts
                          : which % (unsigned long)nm->parts);
}

static int run_gen(rd_kafka_t *rk, const struct opts *o, const uint8_t *sk)
{
    uint64_t s = o->seed * 2654435761u + 1;
    static const uint64_t fixed_tokens[5] = {10, 20, 400, 7, 1};
    struct names nm = {.n = o->names > 0 ? o->names : 5,
                       .parts = o->partitions};
    uint64_t *tokens = calloc((size_t)nm.n, sizeof(uint64_t));
    if (tokens == NULL)
        return -1;
    if (o->names > 0) {
        nm.s = calloc((size_t)nm.n, sizeof(*nm.s));
        if (nm.s == NULL) {
            free(tokens);
            return -1;
        }
        for (long k = 0; k < nm.n; k++) {
            (void)snprintf(nm.s[k], sizeof(nm.s[k]), "bench:%ld", k);
            tokens[k] = 10 + (uint64_t)k % 400;
        }
    } else {
        memcpy(tokens, fixed_tokens, sizeof(fixed_tokens));
    }
    int rc = 0;
    for (long i = 0; i < o->count && rc == 0; i++) {
        struct rec r;
        char tok[24];
        char proof[TN_PROOF_HEX_LEN + 1];
        char val[64];
        gen_one(&s, i, tokens, sk, &nm, &r, tok, proof, val);
        rc = produce(rk, o->topic, &r);
        /* A full local queue: serve deliveries and try again. */
        while (rc == 1) {
            rd_kafka_poll(rk, 10);
            rc = produce(rk, o->topic, &r);
        }
        rd_kafka_poll(rk, 0);
    }
    free(nm.s);
    free(tokens);
    return rc;
}

static int run_one(rd_kafka_t *rk, const struct opts *o, const uint8_t *sk)
{
    struct rec r = {.partition = RD_KAFKA_PARTITION_UA,
                    .key = o->key,
                    .token = o->token,
                    .proof = o->proof,
                    .claim = o->claim,
                    .value = o->value != NULL ? o->value : ""};
    char proof[TN_PROOF_HEX_LEN + 1];
    uint64_t t = 0;
    if (sk != NULL && o->key != NULL && o->token != NULL &&
        tn_fence_parse_token(o->token, strlen(o->token), &t) == 0 &&
        tn_proof_sign(sk, o->key, strlen(o->key), t, proof) == 0)
        r.proof = proof;
    return produce(rk, o->topic, &r);
}

static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {
        {"brokers", required_argument, NULL, 'b'},
        {"topic", required_argument, NULL, 't'},
        {"key", required_argument, NULL, 'k'},
        {"token", required_argument, NULL, 'T'},
        {"proof", required_argument, NULL, 'p'},
        {"sign-with", required_argument, NULL, 's'},
        {"value", required_argument, NULL, 'v'},
        {"claim", no_argument, NULL, 'c'},
        {"gen", required_argument, NULL, 'g'},
        {"count", required_argument, NULL, 'n'},
        {"names", required_argument, NULL, 'N'},
        {"partitions", required_argument, NULL, 'P'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof(*o));
    int c = 0;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case 'b':
            o->brokers = optarg;
            break;
        case 't':
            o->topic = optarg;
            break;
        case 'k':
            o->key = optarg;
            break;
        case 'T':
            o->token = optarg;
            break;
        case 'p':
            o->proof = optarg;
            break;
        case 's':
            o->signing_key = optarg;
            break;
        case 'v':
            o->value = optarg;
            break;
        case 'c':
            o->claim = true;
            break;
        case 'g':
            o->seed = strtoull(optarg, NULL, 10);
            break;
        case 'n':
            o->count = strtol(optarg, NULL, 10);
            break;
        case 'N':
            o->names = strtol(optarg, NULL, 10);
            if (o->names < 1 || o->names > 1000000)
                return -1;
            break;
        case 'P':
            o->partitions = strtol(optarg, NULL, 10);
            if (o->partitions < 1 || o->partitions > 100000)
                return -1;
            break;
        default:
            return -1;
        }
    }
    return (o->brokers == NULL || o->topic == NULL) ? -1 : 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    if (parse(argc, argv, &o) < 0) {
        (void)fprintf(
            stderr,
            "usage: tn-produce --brokers B --topic T [--key K] [--token S]"
            " [--proof HEX | --sign-with FILE] [--claim] [--value V]\n"
            "       tn-produce --brokers B --topic T --gen SEED --count N"
            " [--names K [--partitions P]] [--sign-with FILE]\n");
        return 2;
    }
    uint8_t sk[TN_PROOF_SK_BYTES];
    struct tn_errmsg em = {{0}};
    if (o.signing_key != NULL &&
        tn_proof_load_signing_key(o.signing_key, sk, &em) < 0) {
        (void)fprintf(stderr, "tn-produce: %s\n", em.text);
        return 1;
    }
    int failed = 0;
    char err[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", o.brokers, err, sizeof(err));
    rd_kafka_conf_set(conf, "partitioner", "murmur2_random", err, sizeof(err));
    rd_kafka_conf_set(conf, "enable.idempotence", "true", err, sizeof(err));
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_opaque(conf, &failed);
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (rk == NULL) {
        (void)fprintf(stderr, "tn-produce: %s\n", err);
        return 1;
    }
    const uint8_t *skp = o.signing_key != NULL ? sk : NULL;
    int rc = o.count > 0 ? run_gen(rk, &o, skp) : run_one(rk, &o, skp);
    if (rd_kafka_flush(rk, 30000) != RD_KAFKA_RESP_ERR_NO_ERROR)
        rc = -1;
    rd_kafka_destroy(rk);
    return (rc == 0 && failed == 0) ? 0 : 1;
}
