/* SPDX-License-Identifier: MIT */
/* getrandom; hex and constant-time compare from libsodium. */
#include "rand.h"

#include <errno.h>
#include <sodium.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>

#include <tenure/err.h>

int tn_rand_bytes(void *p, size_t len)
{
    uint8_t *b = p;
    while (len > 0) {
        ssize_t n = getrandom(b, len, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return TN_EIO;
        }
        b += n;
        len -= (size_t)n;
    }
    return TN_OK;
}

#define POOL_BYTES 4096

static _Thread_local uint8_t pool[POOL_BYTES];
static _Thread_local size_t pool_left;

int tn_rand_small(void *p, size_t len)
{
    if (len > 64)
        return tn_rand_bytes(p, len);
    if (pool_left < len) {
        int rc = tn_rand_bytes(pool, sizeof(pool));
        if (rc < 0)
            return rc;
        pool_left = sizeof(pool);
    }
    /* Hand out from the end and wipe what was handed out. */
    pool_left -= len;
    memcpy(p, pool + pool_left, len);
    memset(pool + pool_left, 0, len);
    return TN_OK;
}

void tn_hex_encode(const void *p, size_t len, char *out)
{
    sodium_bin2hex(out, 2 * len + 1, p, len);
}

int tn_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int tn_hex_decode(const char *s, size_t slen, void *out, size_t len)
{
    size_t got = 0;
    /* No ignored characters and no end pointer: libsodium fails on any
     * character that is not a hex digit and on an odd count. */
    if (slen != 2 * len ||
        sodium_hex2bin(out, len, s, slen, NULL, &got, NULL) != 0 || got != len)
        return TN_EINVAL;
    return TN_OK;
}

bool tn_ct_equal(const void *a, const void *b, size_t len)
{
    return sodium_memcmp(a, b, len) == 0;
}
