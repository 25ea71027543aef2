/* SPDX-License-Identifier: MIT */
/* The libFuzzer entry point every tests/fuzz/fuzz_<target>.c defines; the
 * corpus replay driver (replay_main.c) calls the same function, so a
 * normal build runs every committed input through it. */
#ifndef TN_TEST_FUZZ_H
#define TN_TEST_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Must return 0; a finding is a crash, an abort or a sanitizer report. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input of the request-body targets: the low bit of the first byte
 * says whether an empty body is allowed, the rest is the body.  False for
 * an empty input (nothing to run). */
static inline bool tn_fuzz_body_input(const uint8_t *data, size_t size,
                                      bool *allow_empty, const char **body,
                                      size_t *len)
{
    if (size == 0)
        return false;
    *allow_empty = (data[0] & 1) != 0;
    *body = (const char *)data + 1;
    *len = size - 1;
    return true;
}

#endif
