/* SPDX-License-Identifier: MIT */
/* logfmt writer.  One write(2) per line so concurrent lines never mix. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

int tn_log_min_level = TN_LOG_INFO;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

int tn_log_level_parse(const char *s)
{
    for (int i = 0; i < 4; i++) {
        if (strcmp(s, level_names[i]) == 0)
            return i;
    }
    return -1;
}

void tn_log_(enum tn_log_level level, const char *module, const char *fmt, ...)
{
    char line[1024];
    int64_t ms = tn_clock_wall_ms();
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    (void)gmtime_r(&secs, &tm);
    int n = snprintf(line, sizeof(line),
                     "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03dZ level=%s "
                     "module=%s msg=",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec, (int)(ms % 1000),
                     level_names[level & 3], module);
    if (n < 0 || (size_t)n >= sizeof(line))
        return;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n;
    if (m > 0)
        len += (size_t)m < sizeof(line) - len - 1 ? (size_t)m
                                                  : sizeof(line) - len - 2;
    line[len++] = '\n';
    (void)!write(STDERR_FILENO, line, len);
}
