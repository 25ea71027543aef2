/* SPDX-License-Identifier: MIT */
/* tn-client-probe's parts: probe.c (the command line, keep) and
 * probe_s.c (session). */
#ifndef TN_TOOLS_PROBE_H
#define TN_TOOLS_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include <tenure/client.h>

/* The client's log hook: one "log at=MONO_MS ..." line on stdout. */
void probe_log(void *ud, const char *msg);
void probe_nap_ms(long ms);
/* tn-client-probe session: the exit code. */
int probe_session(struct tn_client *c, const char *prefix, int64_t ttl_ms,
                  int64_t hold_ms, size_t n);

#endif
