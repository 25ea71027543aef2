/* SPDX-License-Identifier: MIT */
/* Keyed table hash: SipHash-2-4 under a per-process random key. */
#include "hash.h"

#include <pthread.h>
#include <sodium.h>
#include <string.h>

#include "assert.h"
#include "rand.h"

static unsigned char key[crypto_shorthash_KEYBYTES];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void make_key(void)
{
    TN_ASSERT(tn_rand_bytes(key, sizeof(key)) == 0);
}

uint64_t tn_hash(const void *p, size_t len)
{
    unsigned char out[crypto_shorthash_BYTES];
    (void)pthread_once(&key_once, make_key);
    (void)crypto_shorthash(out, p, len, key);
    uint64_t h;
    memcpy(&h, out, sizeof(h));
    return h;
}
