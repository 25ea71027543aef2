/* SPDX-License-Identifier: MIT */
/* The publisher's event log: format, parse, list and read (log.h).  The
 * writer is in publish.c (loop thread). */
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"

#define READ_BUF (256u * 1024u)

/* The letter of each record type in the log (log.h): fixed, whatever
 * the order of enum tn_event_type, since logs outlive a build. */
static const char type_chars[] = {
    [TN_EVENT_ACQUIRED] = 'a',       [TN_EVENT_RELEASED] = 'r',
    [TN_EVENT_EXPIRED] = 'e',        [TN_EVENT_REVOKED] = 'v',
    [TN_EVENT_SESSION_OPENED] = 'o', [TN_EVENT_SESSION_ENDED] = 'c',
    [TN_EVENT_RESET] = 'x',
};
#define N_TYPES (sizeof(type_chars) / sizeof(type_chars[0]))

/* How a session ended, in the token field of a 'c' record. */
static const enum tn_grant_end end_codes[] = {
    [1] = TN_GRANT_RELEASED, [2] = TN_GRANT_EXPIRED, [3] = TN_GRANT_REVOKED};

static unsigned long long end_code(enum tn_grant_end end)
{
    for (unsigned i = 1; i < 4; i++) {
        if (end_codes[i] == end)
            return i;
    }
    return 2; /* expired: what an end of unknown cause is taken for */
}

size_t tn_pub_log_format(const struct tn_pub_record *r, char *out)
{
    bool session = tn_pub_is_session(r->type);
    const char *name = session ? r->session_id : r->name;
    unsigned long long token = r->token;
    if (session)
        token = r->type == TN_EVENT_SESSION_ENDED ? end_code(r->end) : 0;
    size_t olen = strnlen(r->owner_id, TN_OWNER_MAX_BYTES);
    size_t nlen = session ? strnlen(r->session_id, TN_SESSION_ID_HEX)
                          : strnlen(r->name, TN_NAME_MAX_BYTES);
    int n = snprintf(out, TN_PUB_RECORD_MAX, "%llu %c %llu %llu %lld %zu %zu ",
                     (unsigned long long)r->id, type_chars[r->type], token,
                     session ? 0ULL : (unsigned long long)r->floor,
                     (long long)r->at_ms, olen, nlen);
    size_t at = (size_t)n;
    memcpy(out + at, r->owner_id, olen);
    at += olen;
    memcpy(out + at, name, nlen);
    at += nlen;
    out[at++] = '\n';
    return at;
}

/* The type of letter c, or -1. */
static int type_of(char c)
{
    for (size_t i = 0; i < N_TYPES; i++) {
        if (type_chars[i] == c && c != '\0')
            return (int)i;
    }
    return -1;
}

/* A session record's fields from where a lease record has its name and
 * token: false when they are not a session's id and end. */
static bool session_fields(struct tn_pub_record *r)
{
    size_t len = strlen(r->name);
    bool ok = len == TN_SESSION_ID_HEX;
    for (size_t i = 0; ok && i < len; i++)
        ok = (r->name[i] >= '0' && r->name[i] <= '9') ||
             (r->name[i] >= 'a' && r->name[i] <= 'f');
    if (r->type == TN_EVENT_SESSION_ENDED)
        ok = ok && r->token >= 1 && r->token <= 3;
    if (!ok)
        return false;
    memcpy(r->session_id, r->name, TN_SESSION_ID_HEX + 1);
    r->end =
        r->type == TN_EVENT_SESSION_ENDED ? end_codes[r->token] : TN_GRANT_LIVE;
    r->name[0] = '\0';
    r->token = 0;
    return true;
}

/* A decimal number and one space; advances *s. */
static int number(const char **s, const char *end, unsigned long long *out)
{
    const char *p = *s;
    unsigned long long v = 0;
    bool neg = false;
    if (p < end && *p == '-') {
        neg = true;
        p++;
    }
    const char *digits = p;
    while (p < end && *p >= '0' && *p <= '9' && p - digits < 20)
        v = v * 10 + (unsigned long long)(*p++ - '0');
    if (p >= end)
        return 0;
    if (p == digits || *p != ' ')
        return -1;
    *out = neg ? (unsigned long long)-(long long)v : v;
    *s = p + 1;
    return 1;
}

long tn_pub_log_parse(const char *s, const char *end, struct tn_pub_record *r)
{
    const char *p = s;
    unsigned long long id, token, floor, at, olen, nlen;
    int rc;
    if ((rc = number(&p, end, &id)) <= 0)
        return rc;
    if (end - p < 2)
        return 0;
    int t = type_of(p[0]);
    if (t < 0 || p[1] != ' ')
        return -1;
    p += 2;
    if ((rc = number(&p, end, &token)) <= 0 ||
        (rc = number(&p, end, &floor)) <= 0 ||
        (rc = number(&p, end, &at)) <= 0 ||
        (rc = number(&p, end, &olen)) <= 0 ||
        (rc = number(&p, end, &nlen)) <= 0)
        return rc;
    if (olen > TN_OWNER_MAX_BYTES || nlen > TN_NAME_MAX_BYTES)
        return -1;
    if ((size_t)(end - p) < olen + nlen + 1)
        return 0;
    if (p[olen + nlen] != '\n')
        return -1;
    r->id = id;
    r->type = (enum tn_event_type)t;
    r->token = token;
    r->floor = floor;
    r->at_ms = (int64_t)at;
    memcpy(r->owner_id, p, olen);
    r->owner_id[olen] = '\0';
    memcpy(r->name, p + olen, nlen);
    r->name[nlen] = '\0';
    r->session_id[0] = '\0';
    r->end = TN_GRANT_LIVE;
    if (tn_pub_is_session(r->type) && !session_fields(r))
        return -1;
    return (long)(p + olen + nlen + 1 - s);
}

void tn_pub_log_path(const char *dir, uint64_t first, char *out, size_t len)
{
    (void)snprintf(out, len, "%s/ev-%020llu.log", dir,
                   (unsigned long long)first);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int tn_pub_log_list(const char *dir, uint64_t **firsts, size_t *n)
{
    *firsts = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return TN_EIO;
    size_t cap = 0;
    int rc = TN_OK;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        unsigned long long v;
        char tail[8];
        if (sscanf(de->d_name, "ev-%20llu.%4s", &v, tail) != 2 ||
            strcmp(tail, "log") != 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            uint64_t *a = tn_reallocarray(*firsts, cap, sizeof(*a));
            if (a == NULL) {
                rc = TN_ENOMEM;
                break;
            }
            *firsts = a;
        }
        (*firsts)[(*n)++] = v;
    }
    (void)closedir(d);
    if (rc < 0) {
        tn_free(*firsts);
        *firsts = NULL;
        *n = 0;
        return rc;
    }
    if (*n > 1)
        qsort(*firsts, *n, sizeof(**firsts), cmp_u64);
    return TN_OK;
}

void tn_pub_reader_init(struct tn_pub_reader *rd, const char *dir)
{
    memset(rd, 0, sizeof(*rd));
    rd->dir = dir;
    rd->fd = -1;
}

void tn_pub_reader_release(struct tn_pub_reader *rd)
{
    if (rd->fd >= 0)
        (void)close(rd->fd);
    tn_free(rd->buf);
    rd->fd = -1;
    rd->buf = NULL;
}

void tn_pub_reader_seek(struct tn_pub_reader *rd, uint64_t id)
{
    if (rd->fd >= 0)
        (void)close(rd->fd);
    rd->fd = -1;
    rd->next_id = id;
    rd->len = rd->pos = 0;
}

/* Open the file holding next_id: the last one whose first id is not
 * above it.  TN_ENOTFOUND if the log starts after it. */
static int open_file(struct tn_pub_reader *rd)
{
    uint64_t *firsts = NULL;
    size_t n = 0;
    int rc = tn_pub_log_list(rd->dir, &firsts, &n);
    if (rc < 0)
        return rc;
    size_t i = n;
    while (i > 0 && firsts[i - 1] > rd->next_id)
        i--;
    if (i == 0) {
        tn_free(firsts);
        return TN_ENOTFOUND;
    }
    char path[1200];
    tn_pub_log_path(rd->dir, firsts[i - 1], path, sizeof(path));
    tn_free(firsts);
    rd->fd = open(path, O_RDONLY | O_CLOEXEC);
    rd->len = rd->pos = 0;
    return rd->fd >= 0 ? TN_OK : TN_EIO;
}

/* More bytes into buf; 0 at the end of the file. */
static ssize_t fill(struct tn_pub_reader *rd)
{
    if (rd->pos > 0) {
        memmove(rd->buf, rd->buf + rd->pos, rd->len - rd->pos);
        rd->len -= rd->pos;
        rd->pos = 0;
    }
    if (rd->len == READ_BUF)
        return -1; /* a record longer than the buffer: malformed */
    ssize_t got;
    do
        got = read(rd->fd, rd->buf + rd->len, READ_BUF - rd->len);
    while (got < 0 && errno == EINTR);
    if (got > 0)
        rd->len += (size_t)got;
    return got;
}

int tn_pub_reader_next(struct tn_pub_reader *rd, uint64_t head,
                       struct tn_pub_record *out, size_t max, size_t *n)
{
    *n = 0;
    if (rd->buf == NULL && (rd->buf = tn_malloc(READ_BUF)) == NULL)
        return TN_ENOMEM;
    bool reopened = false;
    while (*n < max && rd->next_id <= head) {
        if (rd->fd < 0) {
            int rc = open_file(rd);
            if (rc < 0)
                return rc;
        }
        struct tn_pub_record *r = &out[*n];
        long used = tn_pub_log_parse(rd->buf + rd->pos, rd->buf + rd->len, r);
        if (used < 0)
            return TN_EIO;
        if (used == 0) {
            ssize_t got = fill(rd);
            if (got < 0)
                return TN_EIO;
            if (got == 0) {
                /* The end of this file while next_id is written: it is
                 * in the next file (the writer rolled over). */
                if (reopened)
                    return *n > 0 ? TN_OK : TN_ENOTFOUND;
                (void)close(rd->fd);
                rd->fd = -1;
                reopened = true;
            }
            continue;
        }
        rd->pos += (size_t)used;
        if (r->id < rd->next_id)
            continue; /* before the cursor: skip */
        if (r->id > rd->next_id)
            return *n > 0 ? TN_OK : TN_ENOTFOUND;
        reopened = false;
        rd->next_id++;
        (*n)++;
    }
    return TN_OK;
}
