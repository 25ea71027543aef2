/* SPDX-License-Identifier: MIT */
/* The hash of the in-memory tables whose keys come from outside (lease
 * names, the resource names of Kafka records, history strings):
 * SipHash-2-4 (libsodium's crypto_shorthash) under a key drawn once per
 * process, so that no client can pick names that collide and turn a
 * table's lookups into list walks. */
#ifndef TN_COMMON_HASH_H
#define TN_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Keyed hash of len bytes at p.  Thread-safe. */
uint64_t tn_hash(const void *p, size_t len);

#endif
