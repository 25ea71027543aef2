/* SPDX-License-Identifier: MIT */
/* The embedded store's journal: two files, journal-0 and journal-1, in the
 * data dir.  Every batch of the group commit becomes one record appended to
 * the active file and made durable with one fdatasync; a background
 * compaction later applies whole generations of records to SQLite
 * (disk.c).  docs/ARCHITECTURE.md "The journal" has the format and the
 * argument; in short:
 *
 *  - Generation g lives in file g % 2 and starts at offset 0.  Records
 *    carry their generation and their sequence number in it (1, 2, ...),
 *    so what an older generation left further on in a reused file is never
 *    read as part of a newer one.
 *  - Each record starts on a 512-byte boundary: an append never rewrites a
 *    sector that holds an earlier record, so a torn append can only damage
 *    itself.
 *  - A record is checked by its length and a SipHash of header and payload.
 *    A bad record is a torn tail only if nothing valid of its generation
 *    follows it; otherwise the journal is damaged and replay refuses it.
 *  - Every record also carries the number of records of the previous
 *    generation, so a generation cut short is noticed too.
 *  - Files grow by zero-filled chunks written before the record that needs
 *    them; once grown they are overwritten in place, so an fdatasync writes
 *    data only.
 *
 * Not thread-safe, except that tn_journal_read_gen may run on one thread
 * while another appends, as long as it reads a sealed generation. */
#ifndef TN_STORE_JOURNAL_H
#define TN_STORE_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tenure/err.h>

#include "store/embedded/commit.h"
#include "store/embedded/journal_rec.h" /* TN_JOURNAL_ALIGN, _HEADER */

#define TN_JOURNAL_CHUNK (64 * 1024) /* files grow by this much */

struct tn_journal;

/* One record as read back.  batch holds rows, strings and last_token;
 * valid during the callback only. */
struct tn_journal_rec {
    uint64_t gen;        /* generation */
    uint64_t seq;        /* 1-based number inside the generation */
    int64_t alive_at_ms; /* server clock when it was written */
    unsigned pass;       /* tn_journal_read_gen: which pass (replay: 0) */
    const struct tn_batch *batch;
};

/* Called for each record in order; a negative return stops the read and
 * is passed on. */
typedef int (*tn_journal_fn)(void *ctx, const struct tn_journal_rec *r);

/* Open (creating them empty if missing) dir/journal-0 and dir/journal-1.
 * Appends need tn_journal_begin first.  0, TN_EIO or TN_ENOMEM. */
int tn_journal_open(const char *dir, struct tn_journal **out,
                    struct tn_errmsg *em);
void tn_journal_close(struct tn_journal *j);

/* Read every generation after `after` that the files hold, oldest first,
 * record by record.  *last_gen is the newest generation read (after when
 * none).  TN_EIO with em when the journal is damaged: a record that is not
 * the last of its generation, a generation shorter than the next one says,
 * or a generation missing in between. */
int tn_journal_replay(struct tn_journal *j, uint64_t after, tn_journal_fn fn,
                      void *ctx, uint64_t *last_gen, struct tn_errmsg *em);

/* Read sealed generation gen (TN_EIO if its file does not hold it): read
 * and check its file once, then hand its records to fn in order, `passes`
 * times over (rec->pass 0, 1, ...). */
int tn_journal_read_gen(struct tn_journal *j, uint64_t gen, unsigned passes,
                        tn_journal_fn fn, void *ctx, struct tn_errmsg *em);

/* Start writing generation gen at the start of its file; prev_count is the
 * number of records of gen - 1 that exist (0 after a replay that moved
 * them into SQLite). */
void tn_journal_begin(struct tn_journal *j, uint64_t gen, uint64_t prev_count);

/* Append b as one record of the active generation and fdatasync it.
 * *sync_us gets the time of the fdatasync.  0, TN_ENOSPC (the file could
 * not grow; nothing was written), TN_EIO or TN_ENOMEM.  After TN_EIO the
 * journal must not be appended to again. */
int tn_journal_append(struct tn_journal *j, const struct tn_batch *b,
                      int64_t alive_at_ms, int64_t *sync_us);

/* Seal the active generation: later appends go to the next one, in the
 * other file.  Returns the sealed generation.  The caller must make sure
 * that the generation before it is no longer needed. */
uint64_t tn_journal_seal(struct tn_journal *j);

/* The active generation and the bytes written to it. */
uint64_t tn_journal_gen(const struct tn_journal *j);
uint64_t tn_journal_bytes(const struct tn_journal *j);
/* True after a failed fdatasync: what the files hold may not be durable. */
bool tn_journal_failed(const struct tn_journal *j);

#endif
