/* SPDX-License-Identifier: MIT */
/* logfmt logging for the daemons: one line per event on stderr,
 * "ts=… level=… module=… msg=…" plus key=value pairs.  The level is checked
 * before formatting.  Libraries never call this.  Thread-safe. */
#ifndef TN_COMMON_LOG_H
#define TN_COMMON_LOG_H

enum tn_log_level {
    TN_LOG_DEBUG = 0,
    TN_LOG_INFO = 1,
    TN_LOG_WARN = 2,
    TN_LOG_ERROR = 3,
};

extern int tn_log_min_level; /* messages below this level are dropped */

/* Parse "debug|info|warn|error"; returns the level or -1. */
int tn_log_level_parse(const char *s);

/* fmt is the rest of the line after msg=: a quoted message and optional
 * key=value pairs, e.g. tn_log(TN_LOG_INFO, "store", "\"opened\" path=%s", p)
 */
void tn_log_(enum tn_log_level level, const char *module, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define tn_log(level, module, ...)                                             \
    ((int)(level) >= tn_log_min_level ? tn_log_(level, module, __VA_ARGS__)    \
                                      : (void)0)

#endif
