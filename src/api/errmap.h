/* SPDX-License-Identifier: MIT */
/* The only table that maps a tn_err to an HTTP status and the JSON error
 * code of DESIGN §3 Errors. */
#ifndef TN_API_ERRMAP_H
#define TN_API_ERRMAP_H

struct tn_errmap_entry {
    int rc;           /* tn_err */
    unsigned status;  /* HTTP status */
    const char *code; /* "error" member */
};

/* The entry for rc; unknown codes map to 500 "internal". */
const struct tn_errmap_entry *tn_errmap_find(int rc);

#endif
