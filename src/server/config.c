/* SPDX-License-Identifier: MIT */
/* The option table.  Each option is declared once, with its default, its
 * bounds, its help, and why the default is what it is. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* OPT_LIST: repeatable; each value is appended as one line (an empty
 * value clears the list). */
enum opt_type { OPT_STR, OPT_INT, OPT_BOOL, OPT_LIST };

struct option_def {
    const char *name;   /* flag without dashes; env is TENURE_<NAME> */
    enum opt_type type; /* how to parse */
    size_t offset;      /* into struct tn_config */
    size_t size;        /* bytes of a string field */
    const char *def;    /* default, as text */
    int64_t min, max;   /* bounds of an integer */
    const char *help;   /* one line for --help */
    const char *why;    /* why the default, for docs/CONFIG.md */
};

#define STR(f)                                                                 \
    OPT_STR, offsetof(struct tn_config, f), sizeof(((struct tn_config *)0)->f)
#define INT(f) OPT_INT, offsetof(struct tn_config, f), 0
#define BOOL(f) OPT_BOOL, offsetof(struct tn_config, f), 0
#define LIST(f)                                                                \
    OPT_LIST, offsetof(struct tn_config, f), sizeof(((struct tn_config *)0)->f)

static const struct option_def options[] = {
    {"listen", STR(listen), "127.0.0.1:7300", 0, 0,
     "address to listen on (host:port; port 0 picks a free one)",
     "loopback only: a lock service must not be reachable by strangers "
     "before auth is configured"},
    {"data-dir", STR(data_dir), "./tenure-data", 0, 0,
     "directory of the embedded store (created if missing)",
     "next to where it is started, like most single-node servers"},
    {"store", STR(store), "", 0, 0,
     "empty for the embedded store, or a postgresql:// URL",
     "the embedded store needs nothing else to run"},
    {"signing-key", STR(signing_key), "", 0, 0,
     "Ed25519 signing key file: every grant then carries a proof",
     "off: proofs matter only where sinks verify them"},
    {"auth-file", STR(auth_file), "", 0, 0,
     "JSON file of principals, bearer-token hashes and prefix rules "
     "(reloaded on SIGHUP); empty turns authentication off",
     "off on loopback only: a non-loopback listener needs it"},
    {"tls-cert", STR(tls_cert), "", 0, 0,
     "PEM certificate (chain): serve HTTPS instead of HTTP",
     "plain HTTP on loopback needs no certificate"},
    {"tls-key", STR(tls_key), "", 0, 0, "PEM private key of --tls-cert",
     "needed with --tls-cert"},
    {"tls-client-ca", STR(tls_client_ca), "", 0, 0,
     "PEM CA: require client certificates signed by it; the subject CN "
     "names the principal",
     "off: bearer tokens are simpler to rotate"},
    {"log-level", STR(log_level), "info", 0, 0, "debug, info, warn or error",
     "info logs start-up, shutdown and failures, not each request"},
    {"min-ttl-ms", INT(min_ttl_ms), "100", 1, 86400000,
     "smallest ttl_ms accepted",
     "shorter leases expire before a renew can round-trip"},
    {"max-ttl-ms", INT(max_ttl_ms), "3600000", 1, 604800000,
     "largest ttl_ms (and lock_delay_ms) accepted",
     "an hour bounds how long a dead holder blocks a name"},
    {"max-body-bytes", INT(max_body_bytes), "4096", 256, 1048576,
     "largest request body", "a lease request is a few hundred bytes"},
    {"max-header-bytes", INT(max_header_bytes), "8192", 1024, 65536,
     "largest request header block", "common default of HTTP servers"},
    {"max-connections", INT(max_connections), "1000", 1, 60000,
     "most open connections (parked ones count)",
     "below the default open-file limit of 1024"},
    {"request-timeout-ms", INT(request_timeout_ms), "30000", 100, 3600000,
     "time a connection has to send a whole request (and idle keep-alive)",
     "slow or idle clients must not hold connections for ever"},
    {"drain-timeout-ms", INT(drain_timeout_ms), "10000", 0, 600000,
     "on SIGTERM, how long in-flight requests may take to finish",
     "a commit takes milliseconds; ten seconds is generous"},
    {"expected-leases", INT(expected_leases), "1024", 1, 100000000,
     "number of names to size the lease table for",
     "the table grows by doubling; pre-size it for millions"},
    {"journal-bytes", INT(journal_bytes), "4194304", 65536, 1073741824,
     "embedded store: journal size at which it is compacted into tenure.db",
     "a few MiB compact in well under a second and replay fast at start"},
    {"commit", STR(commit), "inline", 0, 0,
     "embedded store: who writes and fsyncs each batch, the event loop "
     "itself before it waits again (inline) or a committer thread",
     "inline spent 20–28 % less CPU per request and served 9–18 % more "
     "requests/s; thread keeps health, metrics and reads answered "
     "while a sync is slow (docs/PERFORMANCE.md)"},
    {"max-wait-ms", INT(max_wait_ms), "300000", 0, 3600000,
     "largest wait_ms of a blocking acquire (larger is a 400)",
     "five minutes: longer waits belong in a retry loop"},
    {"max-waiters", INT(max_waiters), "10000", 0, 1000000,
     "blocked acquires in all; beyond, 503 capacity",
     "each parks a connection (about 300 B here plus its buffers)"},
    {"max-waiters-per-name", INT(max_waiters_per_name), "1000", 0, 1000000,
     "blocked acquires per name; beyond, 503 capacity",
     "a queue that long on one name is a bug in the callers"},
    {"max-leases", INT(max_leases), "500000", 0, 100000000,
     "live leases at once (PostgreSQL: in the whole database); beyond, new "
     "grants get 503 capacity; 0: no cap",
     "at most about 800 B each with their name: under 400 MiB (CONFIG.md)"},
    {"max-names", INT(max_names), "500000", 0, 100000000,
     "names remembered (live or ended within --retain-ms; PostgreSQL: in "
     "the whole database); beyond, grants of new names get 503 capacity; "
     "0: no cap",
     "at most about 800 B each: under 400 MiB (CONFIG.md)"},
    {"retain-ms", INT(retain_ms), "86400000", 0, 31536000000,
     "forget a name once its last lease ended this long ago; "
     "its floor stays covered by the retired floor; 0 keeps every name",
     "a day: long enough to look a name up after an incident"},
    {"event-backlog", INT(event_backlog), "4096", 1, 10000000,
     "events kept so a stream can resume with Last-Event-ID",
     "a few seconds of heavy churn; older ids get a reset event"},
    {"event-buffer-bytes", INT(event_buffer_bytes), "1048576", 1024, 1073741824,
     "unsent bytes per event stream before it gets a reset event and is "
     "closed",
     "a consumer that far behind is better told to reconnect"},
    {"event-buffer-total-bytes", INT(event_buffer_total_bytes), "67108864",
     65536, 68719476736,
     "unsent bytes of all event streams together; a stream that is behind "
     "when they are reached gets a reset event and is closed",
     "64 MiB bounds stream memory even with every subscriber stalled"},
    {"reply-buffer-total-bytes", INT(reply_buffer_total_bytes), "268435456",
     65536, 68719476736,
     "unsent reply bytes of all connections together; past it the "
     "connections whose client does not read are closed, most unsent first",
     "256 MiB bounds reply memory even with a thousand clients that "
     "pipeline large lists and never read"},
    {"max-pipeline", INT(max_pipeline), "16", 1, 1024,
     "requests of one connection read ahead of their replies",
     "enough for pipelining clients; past it the connection is not read"},
    {"event-heartbeat-ms", INT(event_heartbeat_ms), "15000", 10, 3600000,
     "interval of heartbeat comments on event streams",
     "keeps proxies from closing idle streams; finds dead clients"},
    {"max-subscribers", INT(max_subscribers), "256", 0, 100000,
     "event streams at once; beyond, 503 capacity",
     "each may buffer --event-buffer-bytes: 256 MiB at most (CONFIG.md)"},
    {"insecure-no-auth", BOOL(insecure_no_auth), "false", 0, 0,
     "allow a non-loopback listen address without authentication",
     "refused by default: anyone who can reach it could release leases"},
    {"publish", LIST(publish), "", 0, 0,
     "repeatable: also append every event to redis[s]://HOST:PORT[/DB]/"
     "STREAM or kafka://BROKERS/TOPIC (docs/FENCING.md)",
     "off: the SSE stream needs nothing else; these streams are a "
     "latency aid, not safety"},
    {"publish-opt", LIST(publish_opt), "", 0, 0,
     "repeatable: redis.password=, redis.user=, redis.timeout_ms=, for "
     "rediss:// redis.tls_ca=, redis.tls_cert=, redis.tls_key=, "
     "redis.tls_sni=, redis.tls_verify=0, or kafka.KEY=VALUE handed to "
     "librdkafka (TLS, SASL)",
     "the libraries' own defaults"},
    {"publish-backlog", INT(publish_backlog), "100000", 1, 100000000,
     "events a --publish target may lag before it gets one reset record "
     "instead",
     "about a minute of heavy churn; the log keeps them on disk, not in "
     "memory"},
    {"publish-maxlen", INT(publish_maxlen), "1000000", 0, 1000000000000,
     "Redis streams: XADD MAXLEN ~ this (0: never trimmed)",
     "bounds Redis memory to a few hundred MB of events"},
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static int set_value(struct tn_config *c, const struct option_def *o,
                     const char *v, struct tn_errmsg *em)
{
    char *field = (char *)c + o->offset;
    if (o->type == OPT_STR) {
        if (strlen(v) >= o->size) {
            tn_errmsg_set(em, "option \"%s\" is too long", o->name);
            return TN_EINVAL;
        }
        memcpy(field, v, strlen(v) + 1);
        return TN_OK;
    }
    if (o->type == OPT_LIST) {
        size_t used = strlen(field), n = strlen(v);
        if (n == 0) {
            field[0] = '\0';
            return TN_OK;
        }
        if (strchr(v, '\n') != NULL || used + n + 2 > o->size) {
            tn_errmsg_set(em, "option \"%s\" is too long or repeated too often",
                          o->name);
            return TN_EINVAL;
        }
        memcpy(field + used, v, n);
        memcpy(field + used + n, "\n", 2);
        return TN_OK;
    }
    if (o->type == OPT_BOOL) {
        bool b = strcmp(v, "true") == 0 || strcmp(v, "1") == 0;
        if (!b && strcmp(v, "false") != 0 && strcmp(v, "0") != 0) {
            tn_errmsg_set(em, "option \"%s\" takes true or false", o->name);
            return TN_EINVAL;
        }
        memcpy(field, &b, sizeof(b));
        return TN_OK;
    }
    char *end = NULL;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0' || n < o->min || n > o->max) {
        tn_errmsg_set(em, "option \"%s\" takes an integer in [%lld, %lld]",
                      o->name, (long long)o->min, (long long)o->max);
        return TN_EINVAL;
    }
    int64_t i = n;
    memcpy(field, &i, sizeof(i));
    return TN_OK;
}

static void env_name(const struct option_def *o, char *out, size_t len)
{
    int n = snprintf(out, len, "TENURE_%s", o->name);
    for (int i = 0; i < n && (size_t)i < len; i++)
        out[i] = out[i] == '-' ? '_' : (char)toupper((unsigned char)out[i]);
}

static void print_help(FILE *f)
{
    (void)fprintf(f, "usage: tenured [OPTIONS]\n\n"
                     "The tenure lease server (HTTP/1.1 + JSON).  Every option "
                     "can also be set\nthrough the environment variable shown; "
                     "flags win.\n\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        char env[64];
        env_name(&options[i], env, sizeof(env));
        (void)fprintf(f, "  --%-20s %s\n  %-22s default: %s; env %s\n",
                      options[i].name, options[i].help, "",
                      options[i].def[0] ? options[i].def : "(empty)", env);
    }
    (void)fprintf(f,
                  "  --%-20s %s\n  %-22s env TENURE_CONFIG; lines of "
                  "\"name = value\" (flag names without --); the\n"
                  "  %-22s environment overrides the file, flags override "
                  "both\n",
                  "config FILE", "read options from FILE", "", "");
    (void)fprintf(f, "  --%-20s %s\n  --%-20s %s\n", "help", "this text",
                  "version", "print the version");
}

void tn_config_print_markdown(FILE *f)
{
    (void)fprintf(f, "| flag | environment | default | meaning | why this "
                     "default |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < N_OPTIONS; i++) {
        char env[64];
        env_name(&options[i], env, sizeof(env));
        (void)fprintf(f, "| `--%s` | `%s` | `%s` | %s | %s |\n",
                      options[i].name, env, options[i].def, options[i].help,
                      options[i].why);
    }
}

static const struct option_def *find(const char *name, size_t len)
{
    for (size_t i = 0; i < N_OPTIONS; i++) {
        if (strlen(options[i].name) == len &&
            strncmp(options[i].name, name, len) == 0)
            return &options[i];
    }
    return NULL;
}

static int parse_flags(struct tn_config *c, int argc, char **argv,
                       enum tn_config_action *action, struct tn_errmsg *em)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_help(stdout);
            *action = TN_CONFIG_EXIT_OK;
            return TN_OK;
        }
        if (strcmp(a, "--version") == 0) {
            (void)printf("tenured %s\n", TN_VERSION);
            *action = TN_CONFIG_EXIT_OK;
            return TN_OK;
        }
        if (strcmp(a, "--config-markdown") == 0) {
            tn_config_print_markdown(stdout);
            *action = TN_CONFIG_EXIT_OK;
            return TN_OK;
        }
        if (strcmp(a, "--config") == 0) {
            i++; /* read before the flags, see config_path */
            continue;
        }
        if (strncmp(a, "--config=", 9) == 0)
            continue;
        if (strncmp(a, "--", 2) != 0) {
            tn_errmsg_set(em, "unexpected argument \"%s\"", a);
            return TN_EINVAL;
        }
        const char *eq = strchr(a + 2, '=');
        size_t nlen = eq != NULL ? (size_t)(eq - a - 2) : strlen(a + 2);
        const struct option_def *o = find(a + 2, nlen);
        if (o == NULL) {
            tn_errmsg_set(em, "unknown option \"%s\" (see --help)", a);
            return TN_EINVAL;
        }
        const char *v = eq != NULL ? eq + 1 : NULL;
        if (v == NULL && o->type == OPT_BOOL)
            v = "true";
        if (v == NULL && (v = i + 1 < argc ? argv[++i] : NULL) == NULL) {
            tn_errmsg_set(em, "option \"%s\" needs a value", a);
            return TN_EINVAL;
        }
        int rc = set_value(c, o, v, em);
        if (rc < 0)
            return rc;
    }
    return TN_OK;
}

/* The --config FILE (or TENURE_CONFIG) named on the command line. */
static const char *config_path(int argc, char **argv)
{
    const char *path = getenv("TENURE_CONFIG");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
            path = argv[i + 1];
        else if (strncmp(argv[i], "--config=", 9) == 0)
            path = argv[i] + 9;
    }
    return path;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' ||
                     s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

/* One "name = value" line of a config file; blank and # lines skipped. */
static int config_line(struct tn_config *c, char *line, const char *path,
                       int lineno, struct tn_errmsg *em)
{
    char *t = trim(line);
    if (*t == '\0' || *t == '#')
        return TN_OK;
    char *eq = strchr(t, '=');
    if (eq == NULL) {
        tn_errmsg_set(em, "%s:%d: expected \"name = value\"", path, lineno);
        return TN_EINVAL;
    }
    *eq = '\0';
    char *name = trim(t);
    const struct option_def *o = find(name, strlen(name));
    if (o == NULL || strcmp(name, "config") == 0) {
        tn_errmsg_set(em, "%s:%d: unknown option \"%s\"", path, lineno, name);
        return TN_EINVAL;
    }
    struct tn_errmsg inner = {{0}};
    int rc = set_value(c, o, trim(eq + 1), &inner);
    if (rc < 0)
        tn_errmsg_set(em, "%s:%d: %s", path, lineno, inner.text);
    return rc;
}

static int load_file(struct tn_config *c, const char *path,
                     struct tn_errmsg *em)
{
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        tn_errmsg_set(em, "cannot read config file \"%s\"", path);
        return TN_EINVAL;
    }
    char line[2048];
    int rc = TN_OK;
    for (int n = 1; rc == 0 && fgets(line, sizeof(line), f) != NULL; n++)
        rc = config_line(c, line, path, n, em);
    (void)fclose(f);
    return rc;
}

/* --listen is host:port with a decimal port in 0..65535 (0 picks a free
 * one): getaddrinfo would take 99999 modulo 65536, and a name as port. */
static int check_listen(const char *listen, struct tn_errmsg *em)
{
    const char *colon = strrchr(listen, ':');
    const char *p = colon != NULL ? colon + 1 : "";
    size_t n = strspn(p, "0123456789");
    if (colon == NULL || colon == listen || n == 0 || n > 5 || p[n] != '\0' ||
        strtol(p, NULL, 10) > 65535) {
        tn_errmsg_set(em,
                      "option \"listen\" takes host:port with a port in "
                      "1..65535 (0 picks a free one), not \"%s\"",
                      listen);
        return TN_EINVAL;
    }
    return TN_OK;
}

int tn_config_parse(struct tn_config *c, int argc, char **argv,
                    enum tn_config_action *action, struct tn_errmsg *em)
{
    memset(c, 0, sizeof(*c));
    *action = TN_CONFIG_RUN;
    int rc = TN_OK;
    for (size_t i = 0; rc == 0 && i < N_OPTIONS; i++)
        rc = set_value(c, &options[i], options[i].def, em);
    const char *path = config_path(argc, argv);
    if (rc == 0 && path != NULL)
        rc = load_file(c, path, em);
    for (size_t i = 0; rc == 0 && i < N_OPTIONS; i++) {
        char env[64];
        env_name(&options[i], env, sizeof(env));
        const char *v = getenv(env);
        if (v != NULL)
            rc = set_value(c, &options[i], v, em);
    }
    if (rc == 0)
        rc = parse_flags(c, argc, argv, action, em);
    if (rc == 0)
        rc = check_listen(c->listen, em);
    if (rc == 0 && c->min_ttl_ms > c->max_ttl_ms) {
        tn_errmsg_set(em, "min-ttl-ms is above max-ttl-ms");
        rc = TN_EINVAL;
    }
    return rc;
}
