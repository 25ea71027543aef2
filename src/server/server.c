/* SPDX-License-Identifier: MIT */
/* tenured's wiring.  Start-up order: data dir lock, store (which loads the
 * table), API, HTTP listener; only then is /readyz 200.  Shutdown on
 * SIGTERM: stop accepting, refuse new work with 503, wait for in-flight
 * requests (their commits included), close the store, stop HTTP. */
#include "server.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tenure/fence.h>

#include "api/api.h"
#include "api/auth.h"
#include "api/events.h"
#include "common/alloc.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/loop.h"
#include "http/http.h"
#include "publish/publish.h"
#include "store/store.h"

struct server {
    const struct tn_config *cfg; /* borrowed */
    struct tn_loop *loop;        /* the loop thread's loop */
    struct tn_store *store;      /* the store */
    struct tn_api *api;          /* the API */
    struct tn_events *events;    /* the event hub */
    struct tn_publish *publish;  /* --publish targets, or NULL */
    struct tn_http *http;        /* the listener */
    int sigfd;                   /* signalfd for TERM/INT */
    int lockfd;                  /* flock on data_dir/LOCK */
    int64_t drain_deadline_ms;   /* while draining */
    int64_t drained_at_ms;       /* pending hit 0, flushing replies */
    struct tn_loop_timer drain;  /* drain poll */
    uint8_t signing_key[64];     /* when cfg->signing_key is set */
    char *tls_cert_pem;          /* file contents, owned */
    char *tls_key_pem;           /* file contents, owned */
    char *tls_ca_pem;            /* file contents, owned */
    int exit_code;               /* returned by tn_server_run */
};

static int lock_data_dir(struct server *s)
{
    const char *dir = s->cfg->data_dir;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        tn_log(TN_LOG_ERROR, "server", "\"cannot create data dir\" dir=\"%s\"",
               dir);
        return TN_EIO;
    }
    char path[1100];
    (void)snprintf(path, sizeof(path), "%s/LOCK", dir);
    s->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (s->lockfd < 0 || flock(s->lockfd, LOCK_EX | LOCK_NB) < 0) {
        tn_log(TN_LOG_ERROR, "server",
               "\"data dir is in use by another tenured\" dir=\"%s\"", dir);
        return TN_EBUSY;
    }
    return TN_OK;
}

static void drain_tick(void *arg)
{
    struct server *s = arg;
    int64_t now = tn_clock_now_ms();
    if (tn_http_pending(s->http) > 0 && now < s->drain_deadline_ms) {
        tn_loop_timer_arm(s->loop, &s->drain, now + 10, drain_tick, s);
        return;
    }
    if (s->drained_at_ms == 0) {
        /* Let the last replies be written before the sockets close. */
        s->drained_at_ms = now;
        tn_loop_timer_arm(s->loop, &s->drain, now + 100, drain_tick, s);
        return;
    }
    tn_loop_stop(s->loop);
}

/* SIGHUP: load the auth file again; on error keep the table in force.
 * Connections and requests in flight are not touched. */
static void reload_auth(struct server *s)
{
    if (s->cfg->auth_file[0] == '\0')
        return;
    struct tn_auth *a = NULL;
    struct tn_errmsg em = {{0}};
    int rc = tn_auth_load(s->cfg->auth_file, &a, &em);
    if (rc < 0) {
        tn_log(TN_LOG_ERROR, "server",
               "\"auth file reload failed, keeping the previous one\" "
               "path=\"%s\" detail=\"%s\"",
               s->cfg->auth_file, em.text);
        return;
    }
    tn_api_set_auth(s->api, a);
    tn_log(TN_LOG_INFO, "server",
           "\"auth file reloaded\" path=\"%s\" "
           "principals=%zu",
           s->cfg->auth_file, tn_auth_principal_count(a));
}

static void on_signal(void *arg, uint32_t events)
{
    struct server *s = arg;
    struct signalfd_siginfo si;
    (void)events;
    if (read(s->sigfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
        return;
    if (si.ssi_signo == SIGHUP) {
        reload_auth(s);
        return;
    }
    if (s->drain_deadline_ms != 0)
        return;
    tn_log(TN_LOG_INFO, "server", "\"draining\" signal=%u pending=%zu",
           si.ssi_signo, tn_http_pending(s->http));
    s->drain_deadline_ms = tn_clock_now_ms() + s->cfg->drain_timeout_ms;
    tn_api_set_draining(s->api, true);
    tn_http_quiesce(s->http);
    if (s->store->ops->drain != NULL)
        s->store->ops->drain(s->store);
    tn_events_end_all(s->events);
    drain_tick(s);
}

static int setup_signals(struct server *s)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
        return TN_EIO;
    (void)signal(SIGPIPE, SIG_IGN);
    s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (s->sigfd < 0)
        return TN_EIO;
    return tn_loop_add_fd(s->loop, s->sigfd, EPOLLIN, on_signal, s);
}

/* Every event goes to the SSE hub and, with --publish, to the log. */
static void on_event(void *arg, const struct tn_event *ev)
{
    struct server *s = arg;
    tn_publish_event(s->publish, ev);
    tn_events_publish(s->events, ev);
}

static bool watched(void *arg)
{
    struct server *s = arg;
    return s->publish != NULL || tn_events_watched(s->events);
}

/* Split a list option (one value per line) into ptrs; returns the count. */
static size_t split_lines(char *list, const char **ptrs, size_t max)
{
    size_t n = 0;
    for (char *line = list; *line != '\0' && n < max;) {
        char *nl = strchr(line, '\n');
        ptrs[n++] = line;
        if (nl == NULL)
            break;
        *nl = '\0';
        line = nl + 1;
    }
    return n;
}

static int start_publish(struct server *s)
{
    const struct tn_config *c = s->cfg;
    if (c->publish[0] == '\0')
        return TN_OK;
    static char urls[sizeof(c->publish)], opts[sizeof(c->publish_opt)];
    memcpy(urls, c->publish, sizeof(urls));
    memcpy(opts, c->publish_opt, sizeof(opts));
    const char *u[TN_PUBLISH_MAX_TARGETS + 1], *o[TN_PUBLISH_MAX_OPTS + 1];
    char dir[1100];
    (void)snprintf(dir, sizeof(dir), "%s/publish", c->data_dir);
    struct tn_publish_config pc = {
        .dir = dir,
        .urls = u,
        .n_urls = split_lines(urls, u, TN_PUBLISH_MAX_TARGETS + 1),
        .opts = o,
        .n_opts = split_lines(opts, o, TN_PUBLISH_MAX_OPTS + 1),
        .backlog = (uint64_t)c->publish_backlog,
        .maxlen = (uint64_t)c->publish_maxlen,
        .pg_url = s->store->backend->caps.shared ? c->store : NULL,
    };
    struct tn_errmsg em = {{0}};
    int rc = tn_publish_start(&pc, &s->publish, &em);
    if (rc < 0)
        tn_log(TN_LOG_ERROR, "server",
               "\"cannot start publishing\" detail=\"%s\"", em.text);
    return rc;
}

static void publish_metrics(void *arg, struct tn_buf *out)
{
    struct server *s = arg;
    tn_publish_metrics(s->publish, out);
}

static int open_store(struct server *s)
{
    struct tn_store_config sc = {
        .url = s->cfg->store,
        .data_dir = s->cfg->data_dir,
        .batch_max = 4096,
        .expected_leases = (size_t)s->cfg->expected_leases,
        .journal_bytes = (uint64_t)s->cfg->journal_bytes,
        .commit_in_loop = strcmp(s->cfg->commit, "inline") == 0,
        .max_waiters = (size_t)s->cfg->max_waiters,
        .max_waiters_per_name = (size_t)s->cfg->max_waiters_per_name,
        .max_leases = (size_t)s->cfg->max_leases,
        .max_names = (size_t)s->cfg->max_names,
        .max_sessions = (size_t)s->cfg->max_sessions,
        .require_sync_standby = s->cfg->require_sync_standby,
        .retain_ms = s->cfg->retain_ms,
        .max_wait_ms = s->cfg->max_wait_ms,
        .on_event = on_event,
        .event_ctx = s,
        .watched = watched,
    };
    struct tn_errmsg em = {{0}};
    const struct tn_store_backend *b = tn_store_backend_for(sc.url);
    int rc = b != NULL && b->caps.in_data_dir ? lock_data_dir(s) : TN_OK;
    if (rc == 0)
        rc = tn_store_open(s->loop, &sc, &s->store, &em);
    if (rc < 0)
        tn_log(TN_LOG_ERROR, "server",
               "\"cannot open the store\" err=%s "
               "detail=\"%s\"",
               tn_errname(rc), em.text);
    return rc;
}

static int start_api(struct server *s)
{
    struct tn_api_config ac = {
        .store = s->store,
        .min_ttl_ms = s->cfg->min_ttl_ms,
        .max_ttl_ms = s->cfg->max_ttl_ms,
        .max_wait_ms = s->cfg->max_wait_ms,
        .events = s->events,
        .client_certs = s->cfg->tls_client_ca[0] != '\0',
        .max_batch_names = (size_t)s->cfg->max_batch_names,
        .max_batch_body_bytes = (size_t)s->cfg->max_batch_body_bytes,
        .max_connections = (size_t)s->cfg->max_connections,
        .reserved_connections = (size_t)s->cfg->reserved_connections,
        .max_waiters_per_address = (size_t)s->cfg->max_waiters_per_address,
        .max_waiters_per_principal = (size_t)s->cfg->max_waiters_per_principal,
        .more_metrics = publish_metrics,
        .more_metrics_ctx = s};
    if (s->cfg->signing_key[0] != '\0') {
        struct tn_errmsg em = {{0}};
        int rc =
            tn_proof_load_signing_key(s->cfg->signing_key, s->signing_key, &em);
        if (rc < 0) {
            tn_log(TN_LOG_ERROR, "server",
                   "\"cannot load the signing key\" path=\"%s\" detail=\"%s\"",
                   s->cfg->signing_key, em.text);
            return rc;
        }
        ac.signing_key = s->signing_key;
    }
    s->api = tn_api_new(&ac);
    if (s->api == NULL)
        return TN_ENOMEM;
    if (s->cfg->auth_file[0] == '\0')
        return TN_OK;
    if (!s->store->backend->caps.binds_principal) {
        /* Fail closed: with auth on, renew and release must be bound to
         * the acquiring principal, and this store cannot do that yet. */
        tn_log(TN_LOG_ERROR, "server",
               "\"--auth-file is not supported with the %s store yet\"",
               s->store->backend->name);
        return TN_EINVAL;
    }
    struct tn_auth *a = NULL;
    struct tn_errmsg em = {{0}};
    int rc = tn_auth_load(s->cfg->auth_file, &a, &em);
    if (rc < 0) {
        tn_log(TN_LOG_ERROR, "server",
               "\"cannot load the auth file\" path=\"%s\" detail=\"%s\"",
               s->cfg->auth_file, em.text);
        return rc;
    }
    tn_api_set_auth(s->api, a);
    tn_log(TN_LOG_INFO, "server", "\"authentication on\" principals=%zu",
           tn_auth_principal_count(a));
    return TN_OK;
}

/* Read a whole (small) PEM file into a NUL-terminated string. */
static int read_pem(const char *path, char **out)
{
    *out = NULL;
    if (path[0] == '\0')
        return TN_OK;
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return TN_EIO;
    struct tn_buf b;
    tn_buf_init(&b, 1u << 20);
    char chunk[4096];
    size_t n;
    int rc = TN_OK;
    while (rc == 0 && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        rc = tn_buf_append(&b, chunk, n);
    (void)fclose(f);
    if (rc < 0 || b.len == 0) {
        tn_buf_release(&b);
        return rc < 0 ? rc : TN_EIO;
    }
    *out = b.data;
    return TN_OK;
}

static int load_tls(struct server *s)
{
    const struct tn_config *c = s->cfg;
    if ((c->tls_cert[0] == '\0') != (c->tls_key[0] == '\0') ||
        (c->tls_client_ca[0] != '\0' && c->tls_cert[0] == '\0')) {
        tn_log(TN_LOG_ERROR, "server",
               "\"--tls-cert and --tls-key go "
               "together, and --tls-client-ca needs them\"");
        return TN_EINVAL;
    }
    const char *bad = NULL;
    if (read_pem(c->tls_cert, &s->tls_cert_pem) < 0)
        bad = c->tls_cert;
    else if (read_pem(c->tls_key, &s->tls_key_pem) < 0)
        bad = c->tls_key;
    else if (read_pem(c->tls_client_ca, &s->tls_ca_pem) < 0)
        bad = c->tls_client_ca;
    if (bad != NULL)
        tn_log(TN_LOG_ERROR, "server",
               "\"cannot read a TLS file\" "
               "path=\"%s\"",
               bad);
    return bad != NULL ? TN_EIO : TN_OK;
}

static int start_http(struct server *s)
{
    struct tn_http_config hc = {
        .listen = s->cfg->listen,
        .max_connections = (size_t)s->cfg->max_connections,
        .request_timeout_ms = s->cfg->request_timeout_ms,
        .max_body_bytes = (size_t)s->cfg->max_body_bytes,
        .max_header_bytes = (size_t)s->cfg->max_header_bytes,
        .tls_cert_pem = s->tls_cert_pem,
        .tls_key_pem = s->tls_key_pem,
        .tls_client_ca_pem = s->tls_ca_pem,
        .max_pipeline = (size_t)s->cfg->max_pipeline,
        .max_stream_bytes_total = (size_t)s->cfg->event_buffer_total_bytes,
        .max_reply_bytes_total = (size_t)s->cfg->reply_buffer_total_bytes,
        /* With authentication a page has no credential to use, and TLS
         * fails on a rebound name's certificate: names are then free. */
        .check_host =
            s->cfg->auth_file[0] == '\0' && s->cfg->tls_client_ca[0] == '\0',
        .allow_hosts = s->cfg->allow_host,
        .allow_origins = s->cfg->allow_origin,
        .handler = tn_api_handle,
        .on_headers = tn_api_headers,
        .body_cap = tn_api_body_cap,
        .app = s->api,
    };
    struct tn_errmsg em = {{0}};
    int rc = tn_http_start(s->loop, &hc, &s->http, &em);
    if (rc < 0) {
        tn_log(TN_LOG_ERROR, "server", "\"cannot start HTTP\" detail=\"%s\"",
               em.text);
        return rc;
    }
    tn_api_set_http(s->api, s->http);
    tn_log(TN_LOG_INFO, "server",
           "\"listening\" listen=\"%s\" port=%u store=%s tls=%s",
           s->cfg->listen, tn_http_port(s->http), s->store->backend->name,
           s->tls_cert_pem == NULL ? "off"
           : s->tls_ca_pem == NULL ? "on"
                                   : "mutual");
    return TN_OK;
}

static void shutdown_all(struct server *s)
{
    if (s->store != NULL)
        s->store->ops->close(s->store);
    /* After the store: its last events are in the log by now. */
    tn_publish_stop(s->publish, 2000);
    s->publish = NULL;
    if (s->http != NULL) {
        tn_loop_run_posts(s->loop);
        tn_api_set_http(s->api, NULL);
        tn_http_stop(s->http);
    }
    tn_api_free(s->api);
    tn_free(s->tls_cert_pem);
    if (s->tls_key_pem != NULL)
        sodium_memzero(s->tls_key_pem, strlen(s->tls_key_pem));
    tn_free(s->tls_key_pem);
    tn_free(s->tls_ca_pem);
    tn_events_free(s->events);
    if (s->sigfd >= 0)
        (void)close(s->sigfd);
    if (s->lockfd >= 0)
        (void)close(s->lockfd);
    tn_loop_free(s->loop);
}

int tn_server_run(const struct tn_config *cfg)
{
    struct server s = {.cfg = cfg, .sigfd = -1, .lockfd = -1, .exit_code = 1};
    if (!cfg->insecure_no_auth && cfg->auth_file[0] == '\0' &&
        !tn_http_listen_is_loopback(cfg->listen)) {
        tn_log(TN_LOG_ERROR, "server",
               "\"refusing to listen on a non-loopback address without "
               "authentication: give --auth-file FILE (see docs/SECURITY.md), "
               "or use --listen 127.0.0.1:PORT, or pass --insecure-no-auth "
               "if you really mean it\" listen=\"%s\"",
               cfg->listen);
        return 2;
    }
    s.loop = tn_loop_new();
    if (s.loop == NULL)
        return 1;
    struct tn_events_config ec = {
        .backlog = (size_t)cfg->event_backlog,
        .max_buffered = (size_t)cfg->event_buffer_bytes,
        .max_subscribers = (size_t)cfg->max_subscribers,
        .heartbeat_ms = cfg->event_heartbeat_ms};
    s.events = tn_events_new(s.loop, &ec);
    int rc = s.events != NULL ? setup_signals(&s) : TN_ENOMEM;
    if (rc == 0)
        rc = open_store(&s);
    /* Before the loop runs, so that no event goes unlogged. */
    if (rc == 0)
        rc = start_publish(&s);
    if (rc == 0)
        rc = start_api(&s);
    if (rc == 0)
        rc = load_tls(&s);
    if (rc == 0)
        rc = start_http(&s);
    if (rc == 0)
        rc = tn_loop_run(s.loop);
    if (rc == 0)
        s.exit_code = 0;
    shutdown_all(&s);
    tn_log(TN_LOG_INFO, "server", "\"stopped\" exit=%d", s.exit_code);
    return s.exit_code;
}
