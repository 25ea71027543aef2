/* SPDX-License-Identifier: MIT */
/* Messages and names for the tn_err table; generated from TN_ERR_LIST. */
#include <stdarg.h>
#include <stdio.h>

#include <tenure/err.h>

const char *tn_strerror(int rc)
{
    switch (rc) {
    case TN_OK:
        return "ok";
#define TN_ERR_MSG_(name, value, msg)                                          \
    case name:                                                                 \
        return msg;
        TN_ERR_LIST(TN_ERR_MSG_)
#undef TN_ERR_MSG_
    default:
        return "unknown error";
    }
}

const char *tn_errname(int rc)
{
    switch (rc) {
    case TN_OK:
        return "TN_OK";
#define TN_ERR_NAME_(name, value, msg)                                         \
    case name:                                                                 \
        return #name;
        TN_ERR_LIST(TN_ERR_NAME_)
#undef TN_ERR_NAME_
    default:
        return "TN_EUNKNOWN";
    }
}

void tn_errmsg_set(struct tn_errmsg *em, const char *fmt, ...)
{
    if (em == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(em->text, sizeof(em->text), fmt, ap);
    va_end(ap);
}
