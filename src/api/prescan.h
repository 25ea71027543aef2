/* SPDX-License-Identifier: MIT */
/* What yajl lets through and RFC 8259 or the API does not (prescan.c). */
#ifndef TN_API_PRESCAN_H
#define TN_API_PRESCAN_H

#include <stdbool.h>
#include <stddef.h>

/* What yajl lets through and the API does not, over the whole body at
 * once: a control byte but the white space RFC 8259 allows (yajl reads
 * form feed and vertical tab as white space), UTF-8 that is not well
 * formed (yajl checks only its shape: overlongs, surrogates and code
 * points past U+10FFFF pass), and \u escapes of unpaired surrogates
 * (which yajl turns into '?' or into another character).  NULL, or why
 * not; *escapes tells whether the body has a backslash. */
const char *tn_json_prescan(const char *buf, size_t len, bool *escapes);

/* yajl lets a trailing token it has not seen the end of pass (an
 * unterminated string after the object): only white space may follow. */
bool tn_json_only_space_after(const char *buf, size_t len, size_t end);

#endif
