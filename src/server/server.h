/* SPDX-License-Identifier: MIT */
/* Wiring of tenured: loop, store, API, HTTP, signals, drain.  Nothing
 * here decides anything about leases. */
#ifndef TN_SERVER_SERVER_H
#define TN_SERVER_SERVER_H

#include "config.h"

/* Run until SIGTERM/SIGINT; returns the process exit status. */
int tn_server_run(const struct tn_config *cfg);

#endif
