/* SPDX-License-Identifier: MIT */
/* The publisher's event log: files dir/ev-<first id>.log of text records
 * "<id> <t> <token> <floor> <at_ms> <owner bytes> <name bytes>
 * <owner><name>\n", appended by the loop thread with one write(2) each
 * and read by the target threads up to the published head.  Ids grow by
 * one per record across files and restarts.  <t> is a for acquired, r
 * released, e expired, v revoked, x reset, and for the records of a
 * session, o opened and c ended: those carry the session's id where a
 * lease record has its name, and a 'c' record how the session ended where
 * a lease record has its token (1 released, 2 expired, 3 revoked); their
 * floor is 0.  Logs written before sessions hold none of them, so they
 * read as they always did. */
#ifndef TN_PUBLISH_LOG_H
#define TN_PUBLISH_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target.h"

#define TN_PUB_RECORD_MAX (TN_NAME_MAX_BYTES + TN_OWNER_MAX_BYTES + 160)

/* Format r into out (at least TN_PUB_RECORD_MAX bytes); returns bytes. */
size_t tn_pub_log_format(const struct tn_pub_record *r, char *out);
/* Parse one record at s (up to end); bytes consumed, 0 if incomplete,
 * -1 if malformed. */
long tn_pub_log_parse(const char *s, const char *end, struct tn_pub_record *r);

/* First ids of the log files in dir, ascending; *n set.  Owned array
 * (tn_free), NULL with *n = 0 when none.  TN_OK, TN_EIO, TN_ENOMEM. */
int tn_pub_log_list(const char *dir, uint64_t **firsts, size_t *n);
/* Path of the file whose first id is first. */
void tn_pub_log_path(const char *dir, uint64_t first, char *out, size_t len);

/* A sequential reader of the log (one target thread). */
struct tn_pub_reader {
    const char *dir;  /* borrowed */
    int fd;           /* open file, -1 */
    uint64_t next_id; /* id of the next record wanted */
    char *buf;        /* read buffer */
    size_t len;       /* bytes in buf */
    size_t pos;       /* parsed up to */
};

void tn_pub_reader_init(struct tn_pub_reader *rd, const char *dir);
void tn_pub_reader_release(struct tn_pub_reader *rd);
/* Position at id (closes the open file). */
void tn_pub_reader_seek(struct tn_pub_reader *rd, uint64_t id);
/* Read records next_id..head, at most max, into out; *n set.  TN_OK,
 * TN_ENOTFOUND (the log no longer holds next_id), TN_EIO, TN_ENOMEM. */
int tn_pub_reader_next(struct tn_pub_reader *rd, uint64_t head,
                       struct tn_pub_record *out, size_t max, size_t *n);

#endif
