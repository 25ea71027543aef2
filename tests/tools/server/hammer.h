/* SPDX-License-Identifier: MIT */
/* tn-hammer internals: options, the curl-multi runner shared by the load and
 * probe modes, and the grant records the checks read back.  Test tool only;
 * single-threaded. */
#ifndef TN_TOOLS_HAMMER_H
#define TN_TOOLS_HAMMER_H

#include <curl/curl.h>
#include <stddef.h>
#include <stdint.h>

#define HM_NAME_MAX 300   /* bytes of a lease name, with NUL */
#define HM_OWNER_MAX 160  /* bytes of an owner id, with NUL */
#define HM_SECRET_MAX 160 /* bytes of a lease secret, with NUL */
#define HM_RESP_MAX 8192  /* bytes of a response body kept */

struct hm_opts {
    const char *url;         /* base URL, http://127.0.0.1:PORT */
    const char *out_path;    /* grant lines are appended here */
    const char *grants_path; /* grant lines read by probe and verify */
    const char *prefix;      /* name prefix, JSON-safe */
    const char *owner;       /* owner id of the probe */
    long conns;              /* concurrent connections, >= 1 */
    long names;              /* load picks names among this many */
    long unique;             /* load: 1 = a new name per acquire */
    long ttl_min_ms;         /* load ttl range, inclusive */
    long ttl_max_ms;         /* load ttl range, inclusive */
    long duration_ms;        /* load stops after this long */
    long count;              /* load stops after this many grants; 0 = no cap */
    long kill_pid;           /* load sends SIGKILL to it; 0 = none */
    long kill_after_ms;      /* ms after the load starts */
    long drain_ms;           /* after stopping, wait this long for replies */
    long seed;               /* name and ttl choice */
    long restart_ms;         /* CLOCK_BOOTTIME ms taken before the restart */
    long ready_ms;           /* ... and once it was ready; 0 = unknown */
    long floor_token;        /* every token checked must be above this */
    long passes;             /* probe passes */
    long gap_ms;             /* ms between probe passes */
    long probe_ttl_ms;       /* ttl the probe asks for */
};

struct hm_grant {
    char name[HM_NAME_MAX];     /* lease name */
    char owner[HM_OWNER_MAX];   /* owner id */
    char secret[HM_SECRET_MAX]; /* lease secret, hex */
    long long token;            /* fencing token */
    long ttl_ms;                /* granted ttl */
    long long send_ms;          /* CLOCK_BOOTTIME ms before the request */
    long long ack_ms;           /* CLOCK_BOOTTIME ms the 201 was read */
};

struct hm_slot {
    CURL *easy;             /* one keep-alive connection's transfers */
    char body[1024];        /* request body */
    char resp[HM_RESP_MAX]; /* response body, truncated at the cap */
    size_t resp_len;        /* bytes in resp */
    char name[HM_NAME_MAX]; /* name of the request in flight */
    long ttl_ms;            /* ttl of the request in flight */
    long long send_ms;      /* when it was handed to curl */
    long target;            /* probe: index of the target, else -1 */
    int busy;               /* 1 while attached to the multi handle */
};

struct hm_run {
    CURLM *multi;            /* the curl multi handle */
    struct hm_slot *slots;   /* conns slots */
    long nslots;             /* number of slots */
    struct curl_slist *hdrs; /* Content-Type: application/json */
    char post_url[512];      /* base URL + /v1/leases */
};

/* Completion callback: code is the HTTP status, or 0 on a transport error. */
typedef void (*hm_done_fn)(void *ctx, struct hm_slot *s, long code);

int hm_run_init(struct hm_run *r, const char *url, long conns);
void hm_run_release(struct hm_run *r);
/* Send an acquire of name by owner for ttl_ms on slot s; 0 or -1. */
int hm_slot_acquire(struct hm_run *r, struct hm_slot *s, const char *name,
                    const char *owner, long ttl_ms);
/* Wait up to timeout_ms for progress, calling done for each completion. */
int hm_run_step(struct hm_run *r, int timeout_ms, hm_done_fn done, void *ctx);
/* Number of slots with a transfer in flight. */
long hm_run_busy(const struct hm_run *r);

/* Parse a 201 body of slot s into g (times from s and now); 0 or -1. */
int hm_parse_grant(const struct hm_slot *s, long long ack_ms,
                   struct hm_grant *g);
/* Append one grant line to f and flush it. */
void hm_write_grant(FILE *f, const struct hm_grant *g);

/* Read every grant line of path into *out (tn_malloc'd, *n_out entries)
 * and the kill line's after instant into *kill_after_ms (-1 if none); 0 or
 * -1.  *max_seen gets the highest token a 409 revealed ("seen" lines), 0 if
 * none; max_seen may be NULL. */
int hm_read_grants(const char *path, struct hm_grant **out, size_t *n_out,
                   long long *kill_after_ms, long long *max_seen);
/* Append "seen NAME TOKEN ACK_MS" for the holder a 409 body of s reveals. */
void hm_write_seen(FILE *f, const struct hm_slot *s, long long ack_ms);

int hm_load(const struct hm_opts *o);
int hm_probe(const struct hm_opts *o);
int hm_verify(const struct hm_opts *o);

#endif
