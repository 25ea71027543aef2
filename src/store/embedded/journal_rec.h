/* SPDX-License-Identifier: MIT */
/* The byte layout of one journal record (journal_rec.c): its header,
 * checksum and payload, encoded and decoded.  Inside the journal only
 * (journal.c reads and writes whole files with it). */
#ifndef TN_STORE_JOURNAL_REC_H
#define TN_STORE_JOURNAL_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/embedded/commit.h"

#define TN_JOURNAL_ALIGN 512 /* records start on this boundary */
#define TN_JOURNAL_HEADER 40 /* bytes of a record's header */

/* A record's header, as read. */
struct tn_jrec_hdr {
    uint32_t version;    /* 1 ("TNJ1") or 2 ("TNJ2") */
    uint32_t len;        /* payload bytes */
    uint64_t gen;        /* generation */
    uint64_t seq;        /* 1, 2, ... inside it */
    uint64_t prev_count; /* records of generation gen - 1 */
};

/* Rows decoded from one payload; grown as needed, freed by the reader. */
struct tn_jrec_rows {
    struct tn_row *v;
    size_t cap;
};

uint64_t tn_jrec_align(uint64_t n);

/* The header at p as it reads (version 0: not a record's), unchecked. */
void tn_jrec_header(const unsigned char *p, struct tn_jrec_hdr *h);
/* Is there a whole record at data[off..size) whose header and checksum
 * hold?  Fills h. */
bool tn_jrec_at(const unsigned char *data, uint64_t size, uint64_t off,
                struct tn_jrec_hdr *h);

/* Decode the checked payload p[0..len) of a record of version `version`
 * into b (rows into r, strings in place).  0, TN_EIO or TN_ENOMEM. */
int tn_jrec_decode(const unsigned char *p, uint32_t len, uint32_t version,
                   struct tn_jrec_rows *r, struct tn_batch *b,
                   int64_t *alive_at_ms);

/* Encode b as record h->seq of generation h->gen (always the newest
 * version) into *buf (grown as needed, *cap bytes), zero-padded to the
 * next TN_JOURNAL_ALIGN boundary.  The record's bytes, or 0 when it
 * cannot be (too large, out of memory). */
uint64_t tn_jrec_encode(unsigned char **buf, size_t *cap,
                        const struct tn_jrec_hdr *h, const struct tn_batch *b,
                        int64_t alive_at_ms);

#endif
