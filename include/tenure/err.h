/* SPDX-License-Identifier: MIT */
/* The one error table of tenure: every failure is a negative tn_err.
 * Domain outcomes (held, lost, stale) are codes, not crashes.  The list is
 * an X-macro so that names, messages and the enum never drift apart. */
#ifndef TENURE_ERR_H
#define TENURE_ERR_H

#include <tenure/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, message) */
#define TN_ERR_LIST(X)                                                         \
    X(TN_ENOMEM, -1, "out of memory")                                          \
    X(TN_EINVAL, -2, "invalid argument")                                       \
    X(TN_EIO, -3, "i/o error")                                                 \
    X(TN_EBUSY, -4, "resource busy, try again")                                \
    X(TN_ETIMEDOUT, -5, "timed out")                                           \
    X(TN_EPROTO, -6, "protocol error")                                         \
    X(TN_ETOOBIG, -7, "too large")                                             \
    X(TN_ENOTFOUND, -8, "not found")                                           \
    X(TN_ECONFLICT, -9, "held by another owner")                               \
    X(TN_ELOST, -10, "lease lost")                                             \
    X(TN_EFORBIDDEN, -11, "forbidden")                                         \
    X(TN_ESTALE, -12, "stale fencing token")                                   \
    X(TN_EEXPIRED, -13, "lease expired")                                       \
    X(TN_ELOCKDELAY, -14, "name in lock delay")                                \
    X(TN_EUNAVAIL, -15, "service unavailable")                                 \
    X(TN_ENOSPC, -16, "no space left on device")                               \
    X(TN_EMETHOD, -17, "method not allowed")                                   \
    X(TN_EMEDIA, -18, "unsupported media type")                                \
    X(TN_ETOOMANY, -19, "too many requests")                                   \
    X(TN_EUNAUTH, -20, "unauthorized")                                         \
    X(TN_ECONNECT, -21, "could not connect")                                   \
    X(TN_ESIGNATURE, -22, "signature missing or invalid")                      \
    X(TN_EINTERNAL, -23, "internal error")                                     \
    X(TN_EHDRTOOBIG, -24, "header fields too large")                           \
    X(TN_ECANCELED, -25, "canceled")                                           \
    X(TN_EURITOOLONG, -26, "request target too long")                          \
    X(TN_ENOTIMPL, -27, "not implemented")                                     \
    X(TN_ECAPACITY, -28, "server at capacity")                                 \
    X(TN_EHTTPVERSION, -29, "HTTP version not supported")                      \
    X(TN_EMISDIRECTED, -30, "misdirected request")

enum tn_err {
    TN_OK = 0,
#define TN_ERR_ENUM_(name, value, msg) name = value,
    TN_ERR_LIST(TN_ERR_ENUM_)
#undef TN_ERR_ENUM_
};

/* A fixed buffer for optional detail, filled where a failure happens.
 * Every function taking one accepts NULL. */
struct tn_errmsg {
    char text[256]; /* NUL-terminated, empty when no detail */
};

/* Static message for rc ("unknown error" for codes outside the table).
 * Thread-safe. */
TN_EXTERN const char *tn_strerror(int rc);

/* Symbolic name of rc, e.g. "TN_ELOST".  Thread-safe. */
TN_EXTERN const char *tn_errname(int rc);

/* printf into em if em is not NULL.  Thread-safe. */
TN_EXTERN void tn_errmsg_set(struct tn_errmsg *em, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif
