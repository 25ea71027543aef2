/* SPDX-License-Identifier: MIT */
/* The libFuzzer entry point every tests/fuzz/fuzz_<target>.c defines; the
 * corpus replay driver (replay_main.c) calls the same function, so a
 * normal build runs every committed input through it. */
#ifndef TN_TEST_FUZZ_H
#define TN_TEST_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Must return 0; a finding is a crash, an abort or a sanitizer report. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
