/* SPDX-License-Identifier: MIT */
/* The only module that reads clocks.  Lease logic takes now_ms from here;
 * the server clock is CLOCK_BOOTTIME: monotonic, immune to wall-clock jumps,
 * and comparable across process restarts within one boot (see boot id). */
#ifndef TN_COMMON_CLOCK_H
#define TN_COMMON_CLOCK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Milliseconds of CLOCK_BOOTTIME.  Thread-safe. */
int64_t tn_clock_now_ms(void);
/* Nanoseconds of CLOCK_MONOTONIC (client side timers, histories). */
int64_t tn_clock_mono_ns(void);
/* Milliseconds of CLOCK_MONOTONIC. */
int64_t tn_clock_mono_ms(void);
/* Wall-clock milliseconds since the epoch: for display and logs only. */
int64_t tn_clock_wall_ms(void);
/* Absolute CLOCK_MONOTONIC time ms from now, for pthread_cond_timedwait on
 * a condition variable set to CLOCK_MONOTONIC. */
struct timespec tn_clock_mono_deadline(int64_t ms);
/* Initialize cv to time its waits on CLOCK_MONOTONIC (for the deadlines
 * above).  0 or TN_ENOMEM. */
int tn_clock_cond_init(pthread_cond_t *cv);
/* The kernel's boot id (36 chars + NUL) into out; 0 or TN_EIO. */
int tn_clock_boot_id(char out[37]);

#endif
