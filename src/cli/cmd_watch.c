/* SPDX-License-Identifier: MIT */
/* tenure watch: print lease events as they happen (GET /v1/events).  It
 * reconnects with Last-Event-ID after a dropped stream, moving to the next
 * server URL, and says so when the server reports that events were lost
 * (a reset).  Events are for eyes and for giving up sooner; never for
 * safety. */
#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "common/sse.h"

static const char usage[] =
    "Usage: tenure watch [--prefix P] [--count N] [--json]\n";
static const char about[] =
    "Print lease events (acquired, released, expired, revoked) as they\n"
    "happen, for names starting with P, and sessions opened and ended.\n"
    "Reconnects and resumes after a dropped stream.\n";
static const char footer[] =
    "Exit: 0 after --count events or on SIGINT/SIGTERM, 1 error, 2 usage.\n";

static volatile sig_atomic_t stop_now;

static void on_stop(int sig)
{
    (void)sig;
    stop_now = 1;
}

struct watch {
    struct tn_cli *cli; /* options */
    struct tn_sse sse;  /* the stream's lines and last event id */
    uint64_t count;     /* events printed */
    uint64_t max_count; /* 0 = no limit */
};

static void print_event(void *arg, const char *data)
{
    struct watch *w = arg;
    json_error_t err;
    json_t *v = json_loads(data, 0, &err);
    if (v == NULL)
        return;
    const char *type = json_string_value(json_object_get(v, "type"));
    w->count++;
    if (w->cli->json) {
        (void)printf("%s\n", data);
    } else if (type != NULL && strcmp(type, "reset") == 0) {
        (void)printf("reset: events were missed; re-read state\n");
    } else if (json_is_string(json_object_get(v, "session_id"))) {
        /* session_opened, session_ended: workers joining and leaving */
        const char *reason = json_string_value(json_object_get(v, "reason"));
        (void)printf("%-8s %s owner=%s%s%s\n", type ? type : "?",
                     json_string_value(json_object_get(v, "session_id")),
                     json_string_value(json_object_get(v, "owner_id")),
                     reason != NULL ? " reason=" : "",
                     reason != NULL ? reason : "");
    } else if (!json_is_string(json_object_get(v, "name"))) {
        w->count--; /* a kind this version does not know: skipped */
    } else {
        (void)printf(
            "%-8s %s owner=%s token=%lld floor=%lld\n", type ? type : "?",
            json_string_value(json_object_get(v, "name")),
            json_string_value(json_object_get(v, "owner_id")),
            (long long)json_integer_value(json_object_get(v, "token")),
            (long long)json_integer_value(json_object_get(v, "floor")));
    }
    (void)fflush(stdout);
    json_decref(v);
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct watch *w = arg;
    size_t len = size * n;
    tn_sse_feed(&w->sse, p, len, print_event, w);
    bool done = stop_now || (w->max_count > 0 && w->count >= w->max_count);
    return done ? 0 : len; /* 0 aborts the transfer */
}

static int progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c,
                    curl_off_t d)
{
    (void)arg, (void)a, (void)b, (void)c, (void)d;
    return stop_now ? 1 : 0;
}

/* One connection to one URL; returns when the stream ends. */
static long stream_once(struct watch *w, CURL *h, const char *base,
                        const char *prefix)
{
    char *esc = curl_easy_escape(h, prefix, 0);
    char url[2048];
    (void)snprintf(url, sizeof(url), "%s/v1/events?prefix=%s", base,
                   esc != NULL ? esc : "");
    curl_free(esc);
    struct curl_slist *hdrs = NULL;
    char hdr[512];
    if (w->sse.last_id[0] != '\0') {
        (void)snprintf(hdr, sizeof(hdr), "Last-Event-ID: %s", w->sse.last_id);
        hdrs = curl_slist_append(hdrs, hdr);
    }
    if (w->cli->opts.auth_token != NULL) {
        (void)snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s",
                       w->cli->opts.auth_token);
        hdrs = curl_slist_append(hdrs, hdr);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    if (w->cli->opts.ca_file != NULL)
        curl_easy_setopt(h, CURLOPT_CAINFO, w->cli->opts.ca_file);
    if (w->cli->opts.cert_file != NULL)
        curl_easy_setopt(h, CURLOPT_SSLCERT, w->cli->opts.cert_file);
    if (w->cli->opts.key_file != NULL)
        curl_easy_setopt(h, CURLOPT_SSLKEY, w->cli->opts.key_file);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, progress);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
    /* No whole-transfer timeout; heartbeats keep a live stream moving. */
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, 60L);
    (void)curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(hdrs);
    return code;
}

/* What watch's options fill in. */
struct watch_args {
    const char *prefix; /* --prefix */
    uint64_t count;     /* --count, 0 = no limit */
};

#define AT(f) TN_OPT_AT(struct watch_args, f)
static const struct tn_opt opts[] = {
    {.name = "prefix",
     .type = TN_OPT_STR,
     AT(prefix),
     .def = "",
     .arg = "P",
     .help = "only names starting with P"},
    {.name = "count",
     .type = TN_OPT_U64,
     AT(count),
     .arg = "N",
     .help = "stop after N events"},
};

static const struct tn_cli_cmd command =
    TN_CLI_CMD("watch", usage, about, footer, opts);

static int parse(struct tn_cli *cli, int argc, char **argv,
                 struct watch_args *a)
{
    struct tn_opt_parser p;
    int ex = tn_cli_parse(cli, &command, a, argc, argv, &p);
    return ex != 0 ? ex
                   : tn_cli_operands(cli, "watch", argc, argv, &p.first_operand,
                                     NULL, false);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000,
                          .tv_nsec = (ms % 1000) * 1000000};
    (void)nanosleep(&ts, NULL);
}

int tn_cmd_watch(struct tn_cli *cli, int argc, char **argv)
{
    struct watch_args a = {NULL, 0};
    struct watch w = {.cli = cli};
    int ex = parse(cli, argc, argv, &a);
    if (ex != 0)
        return ex < 0 ? TN_CLI_OK : ex;
    w.max_count = a.count;
    signal(SIGINT, on_stop);
    signal(SIGTERM, on_stop);
    tn_sse_init(&w.sse, 64 * 1024);
    CURL *h = curl_easy_init();
    if (h == NULL)
        return TN_CLI_ERROR;
    size_t url = 0;
    int failures = 0;
    while (!stop_now && (w.max_count == 0 || w.count < w.max_count)) {
        long code = stream_once(&w, h, cli->opts.urls[url], a.prefix);
        if (code == 401 || code == 403) {
            tn_cli_err(cli, "events: HTTP %ld (check your token)", code);
            ex = TN_CLI_ERROR;
            break;
        }
        if (stop_now || (w.max_count > 0 && w.count >= w.max_count))
            break;
        failures = code == 200 ? 0 : failures + 1;
        if (failures > 0 && failures % (int)cli->opts.n_urls == 0)
            sleep_ms(failures > 20 ? 2000 : 100L * failures);
        url = (url + 1) % cli->opts.n_urls;
    }
    curl_easy_cleanup(h);
    tn_sse_release(&w.sse);
    return ex;
}
