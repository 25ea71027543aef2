/* SPDX-License-Identifier: MIT */
/* The command line of tenure-check, as a function of its streams so that
 * tests can run it in-process: argument parsing, reading, checking and
 * printing the report, and the exit status. */
#include "check/cli.h"

#include <string.h>

#include <tenure/err.h>

#include "check/check.h"
#include "check/history.h"

static void usage(FILE *out)
{
    (void)fputs(
        "usage: tenure-check [--html OUT] [FILE]\n"
        "\n"
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
        "or other error (no verdict).\n"
        "\n"
        "  --html OUT   also write the history as one self-contained HTML "
        "page\n"
        "               (a timeline per resource, violations highlighted)\n"
        "  -h, --help   show this help\n",
        out);
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
    const char *path = NULL;
    const char *html = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--html") == 0) {
            if (i + 1 >= argc || argv[i + 1][0] == '\0') {
                (void)fprintf(err, "tenure-check: --html needs a file\n");
                return TN_CHECK_EXIT_NO_VERDICT;
            }
            html = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(out);
            return TN_CHECK_EXIT_CLEAN;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            (void)fprintf(err, "tenure-check: unknown option \"%s\"\n",
                          argv[i]);
            usage(err);
            return TN_CHECK_EXIT_NO_VERDICT;
        }
        if (path != NULL) {
            (void)fprintf(err, "tenure-check: only one FILE is accepted\n");
            return TN_CHECK_EXIT_NO_VERDICT;
        }
        path = argv[i];
    }
    return run(path, html, in, out, err);
}
