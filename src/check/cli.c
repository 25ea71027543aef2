/* SPDX-License-Identifier: MIT */
/* The command line of tenure-check, as a function of its streams so that
 * tests can run it in-process: argument parsing, reading, checking and
 * printing the report, and the exit status. */
#include "check/cli.h"

#include <string.h>

#include <tenure/err.h>

#include "check/check.h"
#include "check/history.h"
#include "check/history_read.h"
#include "common/opt.h"

/* The options; the values go into struct check_args. */
struct check_args {
    const char *html; /* --html OUT, or NULL */
};

enum { ACT_HELP = 1 };

static const struct tn_opt options[] = {
    {.name = "html",
     .type = TN_OPT_STR,
     TN_OPT_AT(struct check_args, html),
     .flags = TN_OPT_NONEMPTY,
     .arg = "OUT",
     .help = "also write the history as one self-contained HTML page (a "
             "timeline per resource, violations highlighted)"},
    {.name = "help",
     .short_name = 'h',
     .type = TN_OPT_ACTION,
     .action = ACT_HELP,
     .help = "show this help"},
};

static void usage(FILE *out)
{
    static const struct tn_opt_help h = {
        "usage: tenure-check [--html OUT] [FILE]\n",
        "Check a tenure history (JSON lines, one event each; stdin when FILE\n"
        "is absent or \"-\") against the token contract: unique tokens,\n"
        "tokens increasing in real-time order, no grant while an earlier\n"
        "lease was certainly valid, no successful renew or release of a\n"
        "superseded lease, renew keeping its token, no ended lease or\n"
        "session answering as live, leases under a session valid exactly as\n"
        "long as it, and a sink that never admits below its mark or a token\n"
        "never granted.  Operations with an unknown outcome (info) are read\n"
        "in the server's favour.\n"
        "\n"
        "Prints a JSON report on stdout: counts per violation class and a\n"
        "minimal witness for each class violated.\n"
        "\n"
        "Exit status: 0 no violation, 1 violations found, 2 malformed input\n"
        "or other error (no verdict).\n",
        NULL};
    const struct tn_opt_table t = TN_OPT_TABLE(options, NULL);
    tn_opt_help(out, &h, &t);
}

static int read_history(const char *path, FILE *in, struct tn_history *h,
                        struct tn_errmsg *em)
{
    if (path == NULL || strcmp(path, "-") == 0)
        return tn_history_read_stream(h, in, em);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        tn_errmsg_set(em, "cannot open \"%s\"", path);
        return TN_EIO;
    }
    int rc = tn_history_read_stream(h, f, em);
    (void)fclose(f);
    return rc;
}

static int print_report(const struct tn_history *h,
                        const struct tn_check_report *r, FILE *out)
{
    json_t *root = tn_check_report_json(h, r);
    if (root == NULL)
        return TN_ENOMEM;
    int rc = json_dumpf(root, out, JSON_INDENT(2)) == 0 ? TN_OK : TN_EIO;
    json_decref(root);
    if (rc == 0 && (fputc('\n', out) == EOF || fflush(out) != 0))
        rc = TN_EIO;
    return rc;
}

static int write_html(const char *html, const char *path,
                      const struct tn_history *h,
                      const struct tn_check_report *r, struct tn_errmsg *em)
{
    FILE *f = fopen(html, "w");
    if (f == NULL) {
        tn_errmsg_set(em, "cannot write \"%s\"", html);
        return TN_EIO;
    }
    int rc = tn_check_html_write(f, path != NULL ? path : "stdin", h, r);
    if (fclose(f) != 0 && rc == 0)
        rc = TN_EIO;
    if (rc < 0)
        tn_errmsg_set(em, "cannot write \"%s\"", html);
    return rc;
}

static int run(const char *path, const char *html, FILE *in, FILE *out,
               FILE *err)
{
    struct tn_history h;
    struct tn_check_report r;
    struct tn_errmsg em = {{0}};
    tn_history_init(&h);
    int status = TN_CHECK_EXIT_NO_VERDICT;
    int rc = read_history(path, in, &h, &em);
    if (rc == 0)
        rc = tn_check_run(&h, &r);
    if (rc == 0)
        rc = print_report(&h, &r, out);
    if (rc == 0 && html != NULL)
        rc = write_html(html, path, &h, &r, &em);
    if (rc == 0)
        status = tn_check_is_clean(&r) ? TN_CHECK_EXIT_CLEAN
                                       : TN_CHECK_EXIT_VIOLATION;
    else
        (void)fprintf(err, "tenure-check: %s%s%s\n", tn_strerror(rc),
                      em.text[0] != '\0' ? ": " : "", em.text);
    tn_history_release(&h);
    return status;
}

int tn_check_cli(int argc, char **argv, FILE *in, FILE *out, FILE *err)
{
    struct check_args a = {NULL};
    const struct tn_opt_table t = TN_OPT_TABLE(options, &a);
    struct tn_opt_parser p;
    struct tn_errmsg em = {{0}};
    tn_opt_parser_init(&p, 0);
    tn_opt_parser_add(&p, &t);
    if (tn_opt_parse(&p, argc, argv, &em) < 0) {
        (void)fprintf(err, "tenure-check: %s\n", em.text);
        return TN_CHECK_EXIT_NO_VERDICT;
    }
    if (p.action != NULL) {
        usage(out);
        return TN_CHECK_EXIT_CLEAN;
    }
    if (argc - p.first_operand > 1) {
        (void)fprintf(err, "tenure-check: only one FILE is accepted\n");
        return TN_CHECK_EXIT_NO_VERDICT;
    }
    const char *path = p.first_operand < argc ? argv[p.first_operand] : NULL;
    return run(path, a.html, in, out, err);
}
