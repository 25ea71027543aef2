/* SPDX-License-Identifier: MIT */
/* Randomness for secrets (getrandom) and hex helpers (libsodium's, with
 * the strictness tenure needs).  Thread-safe. */
#ifndef TN_COMMON_RAND_H
#define TN_COMMON_RAND_H

#include <stdbool.h>
#include <stddef.h>

/* Fill p[0..len) from getrandom(2); 0 or TN_EIO. */
int tn_rand_bytes(void *p, size_t len);
/* Like tn_rand_bytes for small amounts (<= 64 bytes), served from a
 * per-thread pool refilled by getrandom 4 KiB at a time: one system call
 * per 256 lease secrets instead of one each.  0 or TN_EIO. */
int tn_rand_small(void *p, size_t len);
/* Lower-case hex of p[0..len) into out, which holds 2*len+1 bytes. */
void tn_hex_encode(const void *p, size_t len, char *out);
/* Value of one hex digit (either case), or -1. */
int tn_hex_digit(char c);
/* Decode exactly 2*len hex chars of s into out[0..len); 0 or TN_EINVAL. */
int tn_hex_decode(const char *s, size_t slen, void *out, size_t len);
/* Constant-time comparison of two equal-length byte strings. */
bool tn_ct_equal(const void *a, const void *b, size_t len);

#endif
