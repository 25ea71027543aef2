/* SPDX-License-Identifier: MIT */
/* tn-auth-storm: adversarial renew, release and force-release attempts
 * against one victim lease (CONTRACT §9), over keep-alive connections with
 * curl multi.  Each attempt cycles through a table of attacks (no token,
 * wrong token, another scheme, another principal, a read-only principal,
 * the holder's principal with a wrong secret or the fencing token as the
 * secret, force release by non-admins), each with the statuses it may
 * get.  Any 2xx or any status outside an attack's set fails the run.
 * After the storm the victim must still be live with the same token and
 * owner.  Exit 0 on pass, 1 on failure, 2 on usage errors. */
#include <curl/curl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CONNS 64
#define BODY_CAP 512

enum cred { C_NONE, C_WRONG, C_BASIC, C_OTHER, C_READER, C_HOLDER, C_COUNT };
enum body { B_RIGHT, B_WRONG_SECRET, B_TOKEN_SECRET, B_PADDED_TOKEN, B_COUNT };
enum op { OP_RENEW, OP_RELEASE, OP_FORCE };

struct attack {
    const char *what;  /* shown in the summary */
    enum cred cred;    /* Authorization header */
    enum body body;    /* request body */
    enum op op;        /* method and query */
    int ok[2];         /* statuses it may get (0 = unused) */
    const char *error; /* the "error" member the body must carry */
};

static const struct attack attacks[] = {
    {"renew/no-token", C_NONE, B_RIGHT, OP_RENEW, {401, 0}, "unauthorized"},
    {"release/no-token", C_NONE, B_RIGHT, OP_RELEASE, {401, 0}, "unauthorized"},
    {"force/no-token", C_NONE, B_RIGHT, OP_FORCE, {401, 0}, "unauthorized"},
    {"renew/wrong-token", C_WRONG, B_RIGHT, OP_RENEW, {401, 0}, "unauthorized"},
    {"release/wrong-token",
     C_WRONG,
     B_RIGHT,
     OP_RELEASE,
     {401, 0},
     "unauthorized"},
    {"force/wrong-token", C_WRONG, B_RIGHT, OP_FORCE, {401, 0}, "unauthorized"},
    {"release/basic-auth",
     C_BASIC,
     B_RIGHT,
     OP_RELEASE,
     {401, 0},
     "unauthorized"},
    {"renew/other-principal",
     C_OTHER,
     B_RIGHT,
     OP_RENEW,
     {403, 0},
     "forbidden"},
    {"release/other-principal",
     C_OTHER,
     B_RIGHT,
     OP_RELEASE,
     {403, 0},
     "forbidden"},
    {"force/other-principal",
     C_OTHER,
     B_RIGHT,
     OP_FORCE,
     {403, 0},
     "forbidden"},
    {"renew/read-only-principal",
     C_READER,
     B_RIGHT,
     OP_RENEW,
     {403, 0},
     "forbidden"},
    {"release/read-only-principal",
     C_READER,
     B_RIGHT,
     OP_RELEASE,
     {403, 0},
     "forbidden"},
    {"force/read-only-principal",
     C_READER,
     B_RIGHT,
     OP_FORCE,
     {403, 0},
     "forbidden"},
    {"renew/wrong-secret",
     C_HOLDER,
     B_WRONG_SECRET,
     OP_RENEW,
     {403, 0},
     "forbidden"},
    {"release/wrong-secret",
     C_HOLDER,
     B_WRONG_SECRET,
     OP_RELEASE,
     {403, 0},
     "forbidden"},
    /* The fencing token is public: as a secret it is malformed (400) or,
     * padded to the secret's length, simply wrong (403). */
    {"renew/token-as-secret",
     C_HOLDER,
     B_TOKEN_SECRET,
     OP_RENEW,
     {400, 403},
     NULL},
    {"release/token-as-secret",
     C_HOLDER,
     B_TOKEN_SECRET,
     OP_RELEASE,
     {400, 403},
     NULL},
    {"renew/padded-token-as-secret",
     C_HOLDER,
     B_PADDED_TOKEN,
     OP_RENEW,
     {403, 0},
     "forbidden"},
    {"release/padded-token-as-secret",
     C_HOLDER,
     B_PADDED_TOKEN,
     OP_RELEASE,
     {403, 0},
     "forbidden"},
    {"force/holder-not-admin",
     C_HOLDER,
     B_RIGHT,
     OP_FORCE,
     {403, 0},
     "forbidden"},
};

#define N_ATTACKS (sizeof(attacks) / sizeof(attacks[0]))

struct opts {
    const char *url;          /* http://127.0.0.1:PORT */
    const char *name;         /* victim lease name */
    const char *owner;        /* its owner_id */
    const char *secret;       /* its lease_secret (hex) */
    long long token;          /* its fencing token */
    const char *holder_token; /* bearer of the principal that acquired it */
    const char *other_token;  /* bearer of another acquiring principal */
    const char *reader_token; /* bearer of a read-only principal */
    long attempts;            /* total attempts */
    int conns;                /* parallel keep-alive connections */
};

struct stats {
    long sent[N_ATTACKS]; /* per attack */
    long bad[N_ATTACKS];  /* unexpected outcome per attack */
    long succeeded;       /* 2xx: the property under test */
    long by_status[600];  /* every status seen */
    long transport;       /* curl errors */
    char first_bad[512];  /* the first unexpected outcome */
};

struct slot {
    CURL *easy;          /* reused: keeps its connection */
    size_t attack;       /* index into attacks */
    char body[BODY_CAP]; /* start of the response body */
    size_t body_len;     /* bytes in body */
};

struct prepared {
    struct curl_slist *hdr[C_COUNT]; /* Authorization + Content-Type */
    char body[B_COUNT][256];         /* request bodies */
    char url[2][1024];               /* plain and ?force=true */
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
    struct slot *s = arg;
    size_t len = size * n;
    size_t room = BODY_CAP - 1 - s->body_len;
    size_t take = len < room ? len : room;
    memcpy(s->body + s->body_len, p, take);
    s->body_len += take;
    s->body[s->body_len] = '\0';
    return len;
}

static struct curl_slist *headers(const char *auth)
{
    struct curl_slist *h =
        curl_slist_append(NULL, "Content-Type: application/json");
    if (h != NULL && auth != NULL)
        h = curl_slist_append(h, auth);
    return h;
}

static int prepare(const struct opts *o, struct prepared *pr)
{
    char a[C_COUNT][600];
    (void)snprintf(a[C_WRONG], sizeof(a[0]), "Authorization: Bearer %s",
                   "not-a-principal-0123456789abcdef");
    (void)snprintf(a[C_BASIC], sizeof(a[0]), "Authorization: Basic %s",
                   "aW5kZXhlcjpzZWNyZXQ=");
    (void)snprintf(a[C_OTHER], sizeof(a[0]), "Authorization: Bearer %s",
                   o->other_token);
    (void)snprintf(a[C_READER], sizeof(a[0]), "Authorization: Bearer %s",
                   o->reader_token);
    (void)snprintf(a[C_HOLDER], sizeof(a[0]), "Authorization: Bearer %s",
                   o->holder_token);
    for (int c = 0; c < C_COUNT; c++) {
        pr->hdr[c] = headers(c == C_NONE ? NULL : a[c]);
        if (pr->hdr[c] == NULL)
            return -1;
    }
    /* A wrong secret of the right shape: the real one with each digit
     * rotated, so it differs everywhere. */
    char wrong[128];
    size_t n = strlen(o->secret) < sizeof(wrong) ? strlen(o->secret) : 0;
    static const char digits[] = "0123456789abcdef0";
    for (size_t i = 0; i < n; i++) {
        const char *d = strchr(digits, o->secret[i]);
        wrong[i] = d != NULL && *d != '\0' ? d[1] : '0';
    }
    wrong[n] = '\0';
#define BODY_FMT "{\"token\":%lld,\"lease_secret\":\"%s\"}"
    (void)snprintf(pr->body[B_RIGHT], 256, BODY_FMT, o->token, o->secret);
    (void)snprintf(pr->body[B_WRONG_SECRET], 256, BODY_FMT, o->token, wrong);
    (void)snprintf(pr->body[B_TOKEN_SECRET], 256,
                   "{\"token\":%lld,\"lease_secret\":\"%lld\"}", o->token,
                   o->token);
    (void)snprintf(pr->body[B_PADDED_TOKEN], 256,
                   "{\"token\":%lld,\"lease_secret\":\"%0*lld\"}", o->token,
                   (int)n, o->token);
    char *esc = curl_easy_escape(NULL, o->name, 0);
    if (esc == NULL)
        return -1;
    (void)snprintf(pr->url[0], 1024, "%s/v1/leases/%s", o->url, esc);
    (void)snprintf(pr->url[1], 1024, "%s/v1/leases/%s?force=true", o->url, esc);
    curl_free(esc);
    return 0;
}

static void start(struct slot *s, const struct prepared *pr, size_t attack)
{
    const struct attack *a = &attacks[attack];
    s->attack = attack;
    s->body_len = 0;
    s->body[0] = '\0';
    CURL *e = s->easy;
    (void)curl_easy_setopt(e, CURLOPT_URL, pr->url[a->op == OP_FORCE]);
    (void)curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST,
                           a->op == OP_RENEW ? "PATCH" : "DELETE");
    (void)curl_easy_setopt(e, CURLOPT_HTTPHEADER, pr->hdr[a->cred]);
    (void)curl_easy_setopt(e, CURLOPT_POSTFIELDS, pr->body[a->body]);
}

static void record(struct stats *st, struct slot *s, CURLcode res)
{
    const struct attack *a = &attacks[s->attack];
    long status = 0;
    (void)curl_easy_getinfo(s->easy, CURLINFO_RESPONSE_CODE, &status);
    st->sent[s->attack]++;
    if (res != CURLE_OK) {
        st->transport++;
        status = 0;
    }
    if (status >= 0 && status < 600)
        st->by_status[status]++;
    if (status >= 200 && status < 300)
        st->succeeded++;
    bool ok = status != 0 && (status == a->ok[0] || status == a->ok[1]);
    if (ok && a->error != NULL) {
        char want[64];
        (void)snprintf(want, sizeof(want), "\"error\":\"%s\"", a->error);
        ok = strstr(s->body, want) != NULL;
    }
    if (!ok) {
        st->bad[s->attack]++;
        if (st->first_bad[0] == '\0')
            (void)snprintf(st->first_bad, sizeof(st->first_bad),
                           "%s: status %ld (%s) body %.300s", a->what, status,
                           res != CURLE_OK ? curl_easy_strerror(res) : "ok",
                           s->body);
    }
}

static int storm(const struct opts *o, const struct prepared *pr,
                 struct stats *st)
{
    CURLM *m = curl_multi_init();
    struct slot slots[MAX_CONNS];
    long issued = 0;
    long done = 0;
    if (m == NULL)
        return -1;
    for (int i = 0; i < o->conns; i++) {
        slots[i].easy = curl_easy_init();
        if (slots[i].easy == NULL)
            return -1;
        (void)curl_easy_setopt(slots[i].easy, CURLOPT_WRITEFUNCTION, on_body);
        (void)curl_easy_setopt(slots[i].easy, CURLOPT_WRITEDATA, &slots[i]);
        (void)curl_easy_setopt(slots[i].easy, CURLOPT_PRIVATE, &slots[i]);
        (void)curl_easy_setopt(slots[i].easy, CURLOPT_TIMEOUT_MS, 10000L);
        (void)curl_easy_setopt(slots[i].easy, CURLOPT_TCP_NODELAY, 1L);
        if (issued < o->attempts) {
            start(&slots[i], pr, (size_t)(issued++ % (long)N_ATTACKS));
            (void)curl_multi_add_handle(m, slots[i].easy);
        }
    }
    while (done < issued) {
        int running = 0;
        if (curl_multi_perform(m, &running) != CURLM_OK)
            return -1;
        int left = 0;
        CURLMsg *msg = NULL;
        while ((msg = curl_multi_info_read(m, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            CURL *e = msg->easy_handle;
            CURLcode res = msg->data.result;
            struct slot *s = NULL;
            (void)curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&s);
            record(st, s, res);
            done++;
            (void)curl_multi_remove_handle(m, e);
            if (issued < o->attempts) {
                start(s, pr, (size_t)(issued++ % (long)N_ATTACKS));
                (void)curl_multi_add_handle(m, e);
            }
        }
        if (done < issued &&
            curl_multi_poll(m, NULL, 0, 1000, NULL) != CURLM_OK)
            return -1;
    }
    for (int i = 0; i < o->conns; i++)
        curl_easy_cleanup(slots[i].easy);
    (void)curl_multi_cleanup(m);
    return 0;
}

/* GET url with the holder's credentials; parse the JSON reply. */
static json_t *get_json(const struct opts *o, const char *url, long *status)
{
    struct slot s = {.easy = curl_easy_init()};
    char auth[600];
    if (s.easy == NULL)
        return NULL;
    (void)snprintf(auth, sizeof(auth), "Authorization: Bearer %s",
                   o->holder_token);
    struct curl_slist *h = headers(auth);
    (void)curl_easy_setopt(s.easy, CURLOPT_URL, url);
    (void)curl_easy_setopt(s.easy, CURLOPT_HTTPHEADER, h);
    (void)curl_easy_setopt(s.easy, CURLOPT_WRITEFUNCTION, on_body);
    (void)curl_easy_setopt(s.easy, CURLOPT_WRITEDATA, &s);
    (void)curl_easy_setopt(s.easy, CURLOPT_TIMEOUT_MS, 10000L);
    CURLcode res = curl_easy_perform(s.easy);
    *status = 0;
    if (res == CURLE_OK)
        (void)curl_easy_getinfo(s.easy, CURLINFO_RESPONSE_CODE, status);
    curl_slist_free_all(h);
    curl_easy_cleanup(s.easy);
    return json_loads(s.body, 0, NULL);
}

/* The victim is still live with the same token and owner, and check says
 * its token is current. */
static int verify(const struct opts *o, const struct prepared *pr)
{
    long status = 0;
    json_t *v = get_json(o, pr->url[0], &status);
    json_t *tok = json_object_get(v, "token");
    json_t *own = json_object_get(v, "owner_id");
    int rc = 0;
    if (status != 200 || !json_is_integer(tok) ||
        json_integer_value(tok) != o->token || !json_is_string(own) ||
        strcmp(json_string_value(own), o->owner) != 0) {
        (void)fprintf(stderr,
                      "FAIL: victim changed: GET status %ld, token %lld, "
                      "owner %s (expected %lld, %s)\n",
                      status,
                      json_is_integer(tok) ? (long long)json_integer_value(tok)
                                           : -1LL,
                      json_is_string(own) ? json_string_value(own) : "?",
                      o->token, o->owner);
        rc = -1;
    }
    json_decref(v);
    char url[1100];
    (void)snprintf(url, sizeof(url), "%s/check?token=%lld", pr->url[0],
                   o->token);
    v = get_json(o, url, &status);
    if (status != 200 || !json_is_true(json_object_get(v, "current"))) {
        (void)fprintf(stderr,
                      "FAIL: check says the victim's token %lld is "
                      "no longer current (status %ld)\n",
                      o->token, status);
        rc = -1;
    }
    json_decref(v);
    return rc;
}

static void report(const struct stats *st, long attempts, double secs)
{
    for (size_t i = 0; i < N_ATTACKS; i++)
        (void)printf("attack=%s sent=%ld unexpected=%ld\n", attacks[i].what,
                     st->sent[i], st->bad[i]);
    for (int s = 0; s < 600; s++) {
        if (st->by_status[s] > 0)
            (void)printf("status=%d count=%ld\n", s, st->by_status[s]);
    }
    (void)printf("attempts=%ld succeeded=%ld transport_errors=%ld "
                 "seconds=%.2f rate=%.0f/s\n",
                 attempts, st->succeeded, st->transport, secs,
                 secs > 0 ? (double)attempts / secs : 0.0);
}

static void usage(void)
{
    (void)fprintf(stderr,
                  "usage: tn-auth-storm --url URL --name NAME --owner OWNER "
                  "--token N --secret HEX\n"
                  "         --holder-token T --other-token T --reader-token "
                  "T [--attempts N] [--conns N]\n");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i];
        const char *v = argv[i + 1];
        if (strcmp(k, "--url") == 0)
            o->url = v;
        else if (strcmp(k, "--name") == 0)
            o->name = v;
        else if (strcmp(k, "--owner") == 0)
            o->owner = v;
        else if (strcmp(k, "--secret") == 0)
            o->secret = v;
        else if (strcmp(k, "--token") == 0)
            o->token = strtoll(v, NULL, 10);
        else if (strcmp(k, "--holder-token") == 0)
            o->holder_token = v;
        else if (strcmp(k, "--other-token") == 0)
            o->other_token = v;
        else if (strcmp(k, "--reader-token") == 0)
            o->reader_token = v;
        else if (strcmp(k, "--attempts") == 0)
            o->attempts = strtol(v, NULL, 10);
        else if (strcmp(k, "--conns") == 0)
            o->conns = (int)strtol(v, NULL, 10);
        else
            return -1;
    }
    if (argc % 2 != 1 || o->url == NULL || o->name == NULL ||
        o->owner == NULL || o->secret == NULL || o->token <= 0 ||
        o->holder_token == NULL || o->other_token == NULL ||
        o->reader_token == NULL || o->attempts <= 0 || o->conns < 1 ||
        o->conns > MAX_CONNS)
        return -1;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    struct opts o = {.attempts = 100000, .conns = 16};
    if (parse_args(argc, argv, &o) < 0) {
        usage();
        return 2;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    static struct prepared pr;
    static struct stats st;
    if (prepare(&o, &pr) < 0)
        return 1;
    double t0 = now_s();
    int rc = storm(&o, &pr, &st);
    double secs = now_s() - t0;
    report(&st, o.attempts, secs);
    if (rc < 0) {
        (void)fprintf(stderr, "FAIL: curl multi failed\n");
        return 1;
    }
    bool bad = st.succeeded > 0 || st.first_bad[0] != '\0';
    if (st.first_bad[0] != '\0')
        (void)fprintf(stderr, "FAIL: first unexpected outcome: %s\n",
                      st.first_bad);
    if (st.succeeded > 0)
        (void)fprintf(stderr, "FAIL: %ld adversarial attempts succeeded\n",
                      st.succeeded);
    if (verify(&o, &pr) < 0)
        bad = true;
    for (int c = 0; c < C_COUNT; c++)
        curl_slist_free_all(pr.hdr[c]);
    curl_global_cleanup();
    if (!bad)
        (void)printf("ok: none of %ld adversarial attempts succeeded; the "
                     "victim kept its token and owner\n",
                     o.attempts);
    return bad ? 1 : 0;
}
