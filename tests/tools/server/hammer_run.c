/* SPDX-License-Identifier: MIT */
/* The curl-multi runner of tn-hammer: a fixed set of slots, each reusing its
 * keep-alive connection for one acquire at a time, plus grant parsing and
 * the grant file format.  Single-threaded. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/clock.h"
#include "hammer.h"

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    struct hm_slot *s = ud;
    size_t len = size * n;
    size_t room = sizeof s->resp - 1 - s->resp_len;
    size_t take = len < room ? len : room;
    memcpy(s->resp + s->resp_len, p, take);
    s->resp_len += take;
    s->resp[s->resp_len] = '\0';
    return len;
}

int hm_run_init(struct hm_run *r, const char *url, long conns)
{
    memset(r, 0, sizeof *r);
    if (conns < 1 || conns > 4096)
        return -1;
    int n = snprintf(r->post_url, sizeof r->post_url, "%s/v1/leases", url);
    if (n < 0 || (size_t)n >= sizeof r->post_url)
        return -1;
    r->multi = curl_multi_init();
    r->slots = tn_calloc((size_t)conns, sizeof *r->slots);
    r->hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    if (r->multi == NULL || r->slots == NULL || r->hdrs == NULL)
        return -1;
    r->nslots = conns;
    (void)curl_multi_setopt(r->multi, CURLMOPT_MAX_HOST_CONNECTIONS, conns);
    for (long i = 0; i < conns; i++) {
        struct hm_slot *s = &r->slots[i];
        s->easy = curl_easy_init();
        s->target = -1;
        if (s->easy == NULL)
            return -1;
        (void)curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_body);
        (void)curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
        (void)curl_easy_setopt(s->easy, CURLOPT_PRIVATE, s);
        (void)curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, r->hdrs);
        (void)curl_easy_setopt(s->easy, CURLOPT_TIMEOUT_MS, 5000L);
        (void)curl_easy_setopt(s->easy, CURLOPT_NOSIGNAL, 1L);
        (void)curl_easy_setopt(s->easy, CURLOPT_URL, r->post_url);
    }
    return 0;
}

void hm_run_release(struct hm_run *r)
{
    for (long i = 0; r->slots != NULL && i < r->nslots; i++) {
        struct hm_slot *s = &r->slots[i];
        if (s->busy)
            (void)curl_multi_remove_handle(r->multi, s->easy);
        curl_easy_cleanup(s->easy);
    }
    tn_free(r->slots);
    curl_slist_free_all(r->hdrs);
    if (r->multi != NULL)
        (void)curl_multi_cleanup(r->multi);
    memset(r, 0, sizeof *r);
}

int hm_slot_acquire(struct hm_run *r, struct hm_slot *s, const char *name,
                    const char *owner, long ttl_ms)
{
    int n = snprintf(s->body, sizeof s->body,
                     "{\"name\":\"%s\",\"owner_id\":\"%s\",\"ttl_ms\":%ld}",
                     name, owner, ttl_ms);
    if (n < 0 || (size_t)n >= sizeof s->body)
        return -1;
    int nn = snprintf(s->name, sizeof s->name, "%s", name);
    if (nn < 0 || (size_t)nn >= sizeof s->name)
        return -1;
    s->ttl_ms = ttl_ms;
    s->resp_len = 0;
    s->resp[0] = '\0';
    (void)curl_easy_setopt(s->easy, CURLOPT_POSTFIELDS, s->body);
    (void)curl_easy_setopt(s->easy, CURLOPT_POSTFIELDSIZE, (long)n);
    s->send_ms = (long long)tn_clock_now_ms();
    if (curl_multi_add_handle(r->multi, s->easy) != CURLM_OK)
        return -1;
    s->busy = 1;
    return 0;
}

int hm_run_step(struct hm_run *r, int timeout_ms, hm_done_fn done, void *ctx)
{
    int running = 0;
    if (curl_multi_poll(r->multi, NULL, 0, timeout_ms, NULL) != CURLM_OK)
        return -1;
    if (curl_multi_perform(r->multi, &running) != CURLM_OK)
        return -1;
    CURLMsg *m = NULL;
    int left = 0;
    while ((m = curl_multi_info_read(r->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        CURL *e = m->easy_handle;
        CURLcode res = m->data.result;
        struct hm_slot *s = NULL;
        long code = 0;
        (void)curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&s);
        if (res == CURLE_OK)
            (void)curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
        (void)curl_multi_remove_handle(r->multi, e);
        s->busy = 0;
        done(ctx, s, code);
    }
    return 0;
}

long hm_run_busy(const struct hm_run *r)
{
    long n = 0;
    for (long i = 0; i < r->nslots; i++)
        n += r->slots[i].busy;
    return n;
}

static int copy_str(json_t *root, const char *key, char *out, size_t cap)
{
    const char *v = json_string_value(json_object_get(root, key));
    if (v == NULL)
        return -1;
    int n = snprintf(out, cap, "%s", v);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int hm_parse_grant(const struct hm_slot *s, long long ack_ms,
                   struct hm_grant *g)
{
    json_error_t err;
    json_t *root = json_loadb(s->resp, s->resp_len, 0, &err);
    int rc = -1;
    memset(g, 0, sizeof *g);
    if (root == NULL)
        return -1;
    json_t *tok = json_object_get(root, "token");
    json_t *ttl = json_object_get(root, "ttl_ms");
    if (!json_is_integer(tok) || !json_is_integer(ttl))
        goto out;
    if (copy_str(root, "name", g->name, sizeof g->name) < 0 ||
        copy_str(root, "owner_id", g->owner, sizeof g->owner) < 0 ||
        copy_str(root, "lease_secret", g->secret, sizeof g->secret) < 0)
        goto out;
    g->token = (long long)json_integer_value(tok);
    g->ttl_ms = (long)json_integer_value(ttl);
    g->send_ms = s->send_ms;
    g->ack_ms = ack_ms;
    rc = 0;
out:
    json_decref(root);
    return rc;
}

void hm_write_grant(FILE *f, const struct hm_grant *g)
{
    (void)fprintf(f, "grant %s %s %lld %ld %lld %lld %s\n", g->name, g->owner,
                  g->token, g->ttl_ms, g->send_ms, g->ack_ms, g->secret);
    (void)fflush(f);
}

static int parse_line(const char *line, struct hm_grant *g)
{
    /* Widths are the buffer sizes in hammer.h minus one. */
    int n = sscanf(line, "grant %299s %159s %lld %ld %lld %lld %159s", g->name,
                   g->owner, &g->token, &g->ttl_ms, &g->send_ms, &g->ack_ms,
                   g->secret);
    return n == 7 ? 0 : -1;
}

void hm_write_seen(FILE *f, const struct hm_slot *s, long long ack_ms)
{
    json_error_t err;
    json_t *root = json_loadb(s->resp, s->resp_len, 0, &err);
    json_t *tok = json_object_get(json_object_get(root, "holder"), "token");
    if (json_is_integer(tok)) {
        (void)fprintf(f, "seen %s %lld %lld\n", s->name,
                      (long long)json_integer_value(tok), ack_ms);
        (void)fflush(f);
    }
    json_decref(root);
}

int hm_read_grants(const char *path, struct hm_grant **out, size_t *n_out,
                   long long *kill_after_ms, long long *max_seen)
{
    FILE *f = fopen(path, "re");
    char line[1024];
    size_t n = 0;
    size_t cap = 0;
    struct hm_grant *v = NULL;
    char seen_name[HM_NAME_MAX];
    long long seen = 0;
    long long seen_ack = 0;
    *kill_after_ms = -1;
    if (max_seen != NULL)
        *max_seen = 0;
    if (f == NULL)
        return -1;
    while (fgets(line, sizeof line, f) != NULL) {
        long long before = 0;
        if (sscanf(line, "kill %lld %lld", &before, kill_after_ms) == 2)
            continue;
        if (sscanf(line, "seen %299s %lld %lld", seen_name, &seen, &seen_ack) ==
            3) {
            if (max_seen != NULL && seen > *max_seen)
                *max_seen = seen;
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            struct hm_grant *nv = tn_reallocarray(v, cap, sizeof *v);
            if (nv == NULL)
                break;
            v = nv;
        }
        if (parse_line(line, &v[n]) == 0)
            n++;
    }
    (void)fclose(f);
    *out = v;
    *n_out = n;
    return 0;
}
