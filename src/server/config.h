/* SPDX-License-Identifier: MIT */
/* tenured's configuration: one option table that parses TENURE_*
 * environment variables and --flags (flags win), prints --help, and
 * generates docs/CONFIG.md.  The parsed config is immutable. */
#ifndef TN_SERVER_CONFIG_H
#define TN_SERVER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <tenure/err.h>

struct tn_config {
    char listen[256];             /* host:port */
    char data_dir[1024];          /* embedded store directory */
    char store[1024];             /* "" or postgresql://... */
    char signing_key[1024];       /* Ed25519 signing key file or "" */
    char auth_file[1024];         /* principals and ACLs (JSON), or \"\" */
    char tls_cert[1024];          /* PEM certificate for HTTPS, or "" */
    char tls_key[1024];           /* its PEM private key */
    char tls_client_ca[1024];     /* PEM CA for client certificates, or "" */
    char log_level[16];           /* debug|info|warn|error */
    int64_t min_ttl_ms;           /* smallest ttl accepted */
    int64_t max_ttl_ms;           /* largest ttl accepted */
    int64_t max_body_bytes;       /* request body cap */
    int64_t max_header_bytes;     /* request header cap */
    int64_t max_connections;      /* open connections */
    int64_t request_timeout_ms;   /* whole request / idle keep-alive */
    int64_t drain_timeout_ms;     /* SIGTERM: time to finish in-flight work */
    int64_t expected_leases;      /* table pre-size */
    int64_t journal_bytes;        /* embedded: compaction size */
    char commit[16];              /* embedded: thread|inline */
    int64_t max_wait_ms;          /* largest wait_ms of a blocking acquire */
    int64_t max_waiters;          /* blocked acquires in all */
    int64_t max_waiters_per_name; /* blocked acquires per name */
    int64_t max_leases;           /* live leases, 0 = no cap */
    int64_t max_names;            /* names remembered, 0 = none */
    int64_t retain_ms;            /* retire names ended this long ago */
    int64_t max_sessions;         /* live sessions, 0 = no cap */
    int64_t max_batch_names;      /* names of one batch request */
    int64_t max_batch_body_bytes; /* body of a batch request */
    int64_t event_backlog;        /* events kept for Last-Event-ID */
    int64_t event_buffer_bytes;   /* unsent bytes per subscriber */
    int64_t event_buffer_total_bytes; /* unsent bytes of all subscribers */
    int64_t reply_buffer_total_bytes; /* unsent bytes of all connections */
    int64_t max_pipeline;             /* requests read ahead of replies */
    int64_t event_heartbeat_ms;       /* comment interval on event streams */
    int64_t max_subscribers;          /* event streams at once */
    bool insecure_no_auth;            /* allow non-loopback without auth */
    bool require_sync_standby;        /* PostgreSQL: not ready without a sync
                                         standby */
    char publish[8192];               /* --publish URLs, one per line */
    char publish_opt[8192];  /* --publish-opt key=value, one per line */
    int64_t publish_backlog; /* events a target may lag, then reset */
    int64_t publish_maxlen;  /* Redis MAXLEN ~ (0: none) */

    /* The edge of the HTTP front end (docs/SECURITY.md, docs/CONFIG.md). */
    char allow_host[4096];             /* --allow-host names, one per line */
    char allow_origin[4096];           /* --allow-origin origins, likewise */
    int64_t reserved_connections;      /* kept from waiters and streams */
    int64_t max_waiters_per_address;   /* blocked acquires per client IP */
    int64_t max_waiters_per_principal; /* blocked acquires per principal */
};

/* What parsing decided. */
enum tn_config_action {
    TN_CONFIG_RUN,     /* start the server */
    TN_CONFIG_EXIT_OK, /* --help or --version was printed */
};

/* Fill c from defaults, environment and argv.  0 with *action, or
 * TN_EINVAL with detail in em. */
int tn_config_parse(struct tn_config *c, int argc, char **argv,
                    enum tn_config_action *action, struct tn_errmsg *em);

/* Print the option reference as Markdown (docs/CONFIG.md). */
void tn_config_print_markdown(FILE *f);

#endif
