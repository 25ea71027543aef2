/* SPDX-License-Identifier: MIT */
/* What the embedded store keeps on disk: the journal (journal.h), where
 * every batch becomes durable with one append and one fdatasync, and the
 * SQLite file (src/store/embedded/sqlite.h), where a compaction thread applies
 * each sealed generation of the journal in one transaction.  Restart, recovery
 * after a failure, and tenure-migrate first settle: they apply whatever the
 * journal holds beyond the file, then read the file.
 *
 * tn_disk_write, tn_disk_probe and tn_disk_recover never run at the same
 * time (commit.c serializes them: the committer thread, or the loop thread
 * with --commit=inline); the compaction thread is internal. */
#ifndef TN_STORE_DISK_H
#define TN_STORE_DISK_H

#include <stdbool.h>
#include <stdint.h>

#include <tenure/err.h>

#include "common/buf.h"
#include "lease/lease.h"
#include "store/embedded/commit.h"

/* Journal bytes after which a generation is sealed and compacted. */
#define TN_DISK_JOURNAL_BYTES (4u << 20)

struct tn_disk;

/* Open dir/tenure.db and the journal files, and settle: apply what the
 * journal holds beyond the file.  journal_bytes is the sealing size (0 for
 * TN_DISK_JOURNAL_BYTES).  0, TN_EIO, TN_EBUSY (another process holds the
 * file), TN_EINVAL or TN_ENOMEM, with detail in em. */
int tn_disk_open(const char *dir, uint64_t journal_bytes, struct tn_disk **out,
                 struct tn_errmsg *em);
/* Wait for a running compaction, then close everything. */
void tn_disk_close(struct tn_disk *d);

/* Load the file into t (see tn_sqlite_db_load for the restart rule).  Call
 * after open or after a successful tn_disk_recover. */
int tn_disk_load(struct tn_disk *d, struct tn_lease_table *t, int64_t now_ms,
                 bool exact, struct tn_errmsg *em);
/* The same, telling hook (src/store/embedded/sqlite.h) of each entry as
 * it is loaded. */
struct tn_sqlite_load_hook;
int tn_disk_load_hooked(struct tn_disk *d, struct tn_lease_table *t,
                        int64_t now_ms, bool exact,
                        const struct tn_sqlite_load_hook *hook,
                        struct tn_errmsg *em);

/* Make b durable (one journal record); sets b->sync_us.  0, TN_ENOSPC,
 * TN_EIO (for good) or TN_ENOMEM. */
int tn_disk_write(struct tn_disk *d, struct tn_batch *b);
/* Record that the server is alive now (an empty record).  Also proves
 * that the journal takes writes. */
int tn_disk_probe(struct tn_disk *d);
/* After a failed write: settle again, then probe (needs the disk to take
 * writes).  0 when the file is complete and the journal takes writes
 * again. */
int tn_disk_recover(struct tn_disk *d);

/* Prometheus lines about the journal and its compaction. */
void tn_disk_metrics(struct tn_disk *d, struct tn_buf *out);

#endif
