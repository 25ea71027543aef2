/* SPDX-License-Identifier: MIT */
/* What the lease table's tests share: two secrets, request builders and a
 * fixture holding one table (cmocka setup/teardown). */
#ifndef TN_TEST_LEASE_FIXTURE_H
#define TN_TEST_LEASE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tenure/err.h>

#include "lease/lease.h"

#include <cmocka.h>

static const uint8_t secret_a[TN_SECRET_BYTES] = {1, 2, 3};
static const uint8_t secret_b[TN_SECRET_BYTES] = {9, 9, 9};

static inline struct tn_acquire_req acq(const char *name, const char *owner,
                                        int64_t ttl, const uint8_t *secret)
{
    struct tn_acquire_req r = {.name = name,
                               .name_len = strlen(name),
                               .owner_id = owner,
                               .ttl_ms = ttl,
                               .secret = secret};
    return r;
}

static inline struct tn_token_req tok(const char *name, uint64_t token,
                                      const uint8_t *secret)
{
    struct tn_token_req r = {
        .name = name, .name_len = strlen(name), .token = token};
    memcpy(r.secret, secret, TN_SECRET_BYTES);
    return r;
}

struct fixture {
    struct tn_lease_table t;
};

static inline int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    assert_int_equal(tn_lease_table_init(&f->t, 4), TN_OK);
    *state = f;
    return 0;
}

static inline int teardown(void **state)
{
    struct fixture *f = *state;
    tn_lease_table_release(&f->t);
    free(f);
    return 0;
}

#endif
