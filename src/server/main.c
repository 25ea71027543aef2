/* SPDX-License-Identifier: MIT */
/* tenured: parse the configuration, then run the server. */
#include <stdio.h>

#include "common/assert.h"
#include "common/log.h"
#include "config.h"
#include "server.h"

int main(int argc, char **argv)
{
    struct tn_config cfg;
    enum tn_config_action action;
    struct tn_errmsg em = {{0}};
    if (tn_config_parse(&cfg, argc, argv, &action, &em) < 0) {
        (void)fprintf(stderr, "tenured: %s\n", em.text);
        return 2;
    }
    if (action == TN_CONFIG_EXIT_OK)
        return 0;
    /* --log-level is a choice of exactly these levels (options.def). */
    int level = tn_log_level_parse(cfg.log_level);
    TN_ASSERT(level >= 0);
    tn_log_min_level = level;
    return tn_server_run(&cfg);
}
