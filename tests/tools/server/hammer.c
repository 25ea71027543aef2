/* SPDX-License-Identifier: MIT */
/* tn-hammer: concurrent acquire load against a running tenured, and the
 * checks of the crash test.  Every acknowledged grant is written as one
 * flushed line, with CLOCK_BOOTTIME instants, so a kill -9 of the server can
 * be judged afterwards.  A test helper only: no part of tenure links it.
 *
 *   tn-hammer now
 *   tn-hammer load   --url U --out F [--conns N] [--names N] [--prefix P]
 *                    [--ttl-min MS] [--ttl-max MS] [--duration-ms MS]
 *                    [--count N] [--kill-pid PID --kill-after-ms MS]
 *                    [--drain-ms MS] [--seed N] [--unique 1]
 *                    (--unique 1: every acquire a new name, PREFIX<n>)
 *   tn-hammer probe  --url U --grants F --restart-ms MS --out F
 *                    [--ready-ms MS] [--floor-token T] [--passes N]
 *                    [--gap-ms MS] [--conns N] [--owner O] [--probe-ttl MS]
 *   tn-hammer verify --grants F [--floor-token T]
 *
 * Output lines: "grant NAME OWNER TOKEN TTL_MS SEND_MS ACK_MS SECRET" and
 * "kill BEFORE_MS AFTER_MS".  Violations print "VIOLATION ..." on stdout
 * and make the exit status 1. */
#include "hammer.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"

static void usage(void)
{
    (void)fputs("usage: tn-hammer now | load | probe | verify [options]"
                " (see the source header)\n",
                stderr);
}

static int parse_long(const char *s, long *out)
{
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

struct opt_num {
    const char *flag; /* "--conns" */
    long *val;        /* where the parsed number goes */
};

static int parse_opts(int argc, char **argv, struct hm_opts *o)
{
    const struct opt_num nums[] = {
        {"--conns", &o->conns},
        {"--names", &o->names},
        {"--unique", &o->unique},
        {"--ttl-min", &o->ttl_min_ms},
        {"--ttl-max", &o->ttl_max_ms},
        {"--duration-ms", &o->duration_ms},
        {"--count", &o->count},
        {"--kill-pid", &o->kill_pid},
        {"--kill-after-ms", &o->kill_after_ms},
        {"--drain-ms", &o->drain_ms},
        {"--seed", &o->seed},
        {"--restart-ms", &o->restart_ms},
        {"--ready-ms", &o->ready_ms},
        {"--floor-token", &o->floor_token},
        {"--passes", &o->passes},
        {"--gap-ms", &o->gap_ms},
        {"--probe-ttl", &o->probe_ttl_ms},
    };
    for (int i = 2; i < argc; i += 2) {
        if (i + 1 >= argc)
            return -1;
        const char *f = argv[i];
        const char *v = argv[i + 1];
        if (strcmp(f, "--url") == 0) {
            o->url = v;
            continue;
        }
        if (strcmp(f, "--out") == 0) {
            o->out_path = v;
            continue;
        }
        if (strcmp(f, "--grants") == 0) {
            o->grants_path = v;
            continue;
        }
        if (strcmp(f, "--prefix") == 0) {
            o->prefix = v;
            continue;
        }
        if (strcmp(f, "--owner") == 0) {
            o->owner = v;
            continue;
        }
        size_t k = 0;
        while (k < sizeof nums / sizeof nums[0] && strcmp(f, nums[k].flag) != 0)
            k++;
        if (k == sizeof nums / sizeof nums[0] ||
            parse_long(v, nums[k].val) < 0) {
            (void)fprintf(stderr, "tn-hammer: bad option %s %s\n", f, v);
            return -1;
        }
    }
    return 0;
}

static void set_defaults(struct hm_opts *o)
{
    memset(o, 0, sizeof *o);
    o->conns = 16;
    o->names = 1000;
    o->prefix = "hammer:";
    o->owner = "probe";
    o->ttl_min_ms = 300;
    o->ttl_max_ms = 2000;
    o->duration_ms = 2000;
    o->drain_ms = 300;
    o->passes = 1;
    o->gap_ms = 300;
    o->probe_ttl_ms = 100;
    o->seed = (long)tn_clock_now_ms();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage();
        return 2;
    }
    struct hm_opts o;
    set_defaults(&o);
    if (parse_opts(argc, argv, &o) < 0) {
        usage();
        return 2;
    }
    (void)signal(SIGPIPE, SIG_IGN);
    const char *mode = argv[1];
    if (strcmp(mode, "now") == 0) {
        (void)printf("%lld\n", (long long)tn_clock_now_ms());
        return 0;
    }
    if (strcmp(mode, "load") == 0)
        return hm_load(&o);
    if (strcmp(mode, "probe") == 0)
        return hm_probe(&o);
    if (strcmp(mode, "verify") == 0)
        return hm_verify(&o);
    usage();
    return 2;
}
