/* SPDX-License-Identifier: MIT */
/* Clock reads.  Nothing else in tenure calls clock_gettime. */
#include "clock.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <tenure/err.h>

static int64_t read_ns(clockid_t id)
{
    struct timespec ts;
    (void)clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tn_clock_now_ms(void)
{
    return read_ns(CLOCK_BOOTTIME) / 1000000;
}

int64_t tn_clock_mono_ns(void)
{
    return read_ns(CLOCK_MONOTONIC);
}

int64_t tn_clock_mono_ms(void)
{
    return read_ns(CLOCK_MONOTONIC) / 1000000;
}

int64_t tn_clock_wall_ms(void)
{
    return read_ns(CLOCK_REALTIME) / 1000000;
}

struct timespec tn_clock_mono_deadline(int64_t ms)
{
    int64_t ns = read_ns(CLOCK_MONOTONIC) + ms * 1000000;
    struct timespec ts = {.tv_sec = ns / 1000000000,
                          .tv_nsec = ns % 1000000000};
    return ts;
}

int tn_clock_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0)
        return TN_ENOMEM;
    int rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
                     pthread_cond_init(cv, &ca) == 0
                 ? TN_OK
                 : TN_ENOMEM;
    (void)pthread_condattr_destroy(&ca);
    return rc;
}

int tn_clock_boot_id(char out[37])
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    if (f == NULL)
        return TN_EIO;
    char line[64] = {0};
    int rc = fgets(line, sizeof(line), f) != NULL ? TN_OK : TN_EIO;
    (void)fclose(f);
    if (rc < 0 || strlen(line) < 36)
        return TN_EIO;
    memcpy(out, line, 36);
    out[36] = '\0';
    return TN_OK;
}
