/* SPDX-License-Identifier: MIT */
/* What a lease name (and an owner id) may be: 1..max bytes of printable
 * UTF-8, i.e. well-formed UTF-8 with no C0 or C1 control character and no
 * DEL.  Shared by the server, the client and the fence kit. */
#ifndef TN_COMMON_NAME_H
#define TN_COMMON_NAME_H

#include <stdbool.h>
#include <stddef.h>

#define TN_NAME_MAX_BYTES 256
#define TN_OWNER_MAX_BYTES 128

/* True if s[0..len) is 1..max_bytes of printable UTF-8. */
bool tn_name_is_valid(const char *s, size_t len, size_t max_bytes);

/* The length (1..4) of the well-formed UTF-8 character (RFC 3629) that
 * s[0..left) starts with, or 0 if it starts with none.  left > 0. */
size_t tn_utf8_char(const char *s, size_t left);

/* The bytes of the longest prefix of s[0..len) that is at most max_bytes
 * long and ends on a character boundary, so that a message quoting a cut
 * name stays well-formed UTF-8 (bytes that start no character count as
 * one each). */
size_t tn_utf8_prefix(const char *s, size_t len, size_t max_bytes);

#endif
