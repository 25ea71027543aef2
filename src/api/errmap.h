/* SPDX-License-Identifier: MIT */
/* The only table that maps a tn_err to an HTTP status, the JSON error
 * code of CONTRACT §3 Errors, and the message a store's answer of that code
 * gets.  The codes themselves and their names come from the one X-macro
 * list of <tenure/err.h>. */
#ifndef TN_API_ERRMAP_H
#define TN_API_ERRMAP_H

struct tn_errmap_entry {
    int rc;                    /* tn_err */
    unsigned status;           /* HTTP status */
    const char *code;          /* "error" member */
    const char *store_message; /* "message" of a store result with rc, or
                                  NULL: "store: " and tn_strerror(rc) */
};

/* The entry for rc; unknown codes map to 500 "internal". */
const struct tn_errmap_entry *tn_errmap_find(int rc);

#endif
