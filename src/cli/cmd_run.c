/* SPDX-License-Identifier: MIT */
/* tenure run: hold a lease for exactly as long as a command runs.  The
 * command gets its own process group and TENURE_NAME / TENURE_TOKEN /
 * TENURE_PROOF.  When the lease is lost, or its safe time left falls to the
 * grace period without a renew succeeding, the group gets SIGTERM and then
 * SIGKILL no later than the end of the safe time (or grace after a loss
 * the server reported).  The main loop wakes on its own at that moment,
 * whatever the keepalive thread or the network are doing. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/clock.h"

static const char usage[] =
    "Usage: tenure run [--name] NAME --ttl DUR [--wait DUR] [--grace DUR]\n"
    "                  [--owner ID] [-v] -- COMMAND [ARGS...]\n";
static const char about[] =
    "Acquire NAME, run COMMAND with TENURE_NAME, TENURE_TOKEN (and\n"
    "TENURE_PROOF when the server signs grants) in its environment, and\n"
    "keep the lease alive (renewed every third of the TTL) while it runs.\n"
    "COMMAND runs in its own process group.\n"
    "\n"
    "If the lease is lost, or its safe time left (TTL counted from the\n"
    "last successful renew's sending, minus a tenth) falls to the grace\n"
    "period without a renew succeeding, the group gets SIGTERM, then\n"
    "SIGKILL when the safe time ends (or the grace period after a loss the\n"
    "server reported); tenure run then exits 4 without releasing.\n"
    "When COMMAND exits first, what is left of its group is killed, the\n"
    "lease is released and tenure run exits with COMMAND's status.\n"
    "SIGINT, SIGTERM and SIGHUP are forwarded to the group.  -v logs\n"
    "acquire, renews and loss on stderr.\n";
static const char footer[] =
    "Exit: COMMAND's status (128+N if it died of signal N), 3 held, 4 lost\n"
    "(COMMAND was killed), 1 error, 2 usage.\n";

struct run_args {
    struct tn_acquire_args a; /* acquire request */
    int64_t grace_ms;         /* SIGTERM to SIGKILL */
    char **cmd;               /* NULL-terminated argv of COMMAND */
};

static int wake_fd = -1;  /* write end of the self-pipe (signal handler) */
static atomic_int ka_end; /* enum tn_lease_end once the keepalive ended */

static void on_signal(int signo)
{
    int saved = errno;
    unsigned char b = (unsigned char)signo;
    (void)!write(wake_fd, &b, 1);
    errno = saved;
}

static void on_lease_end(struct tn_lease *l, enum tn_lease_end why, int rc,
                         void *ud)
{
    (void)l;
    (void)rc;
    (void)ud;
    atomic_store(&ka_end, (int)why);
    unsigned char b = 0;
    (void)!write(wake_fd, &b, 1);
}

static void on_log(void *ud, const char *msg)
{
    (void)ud;
    (void)fprintf(stderr, "tenure: %s\n", msg);
}

#define AT(f) TN_OPT_AT(struct run_args, f)
static const struct tn_opt opts[] = {
    {.name = "name",
     .type = TN_OPT_STR,
     AT(a.name),
     .arg = "NAME",
     .help = "lease name (or the first argument before --)"},
    {.name = "ttl",
     .type = TN_OPT_DURATION,
     AT(a.ttl_ms),
     .min = 1,
     .arg = "DUR",
     .help = "lease time to live (required)"},
    {.name = "wait",
     .type = TN_OPT_DURATION,
     AT(a.wait_ms),
     .arg = "DUR",
     .help = "queue for the lease up to DUR when it is held"},
    {.name = "grace",
     .type = TN_OPT_DURATION,
     AT(grace_ms),
     .def = "2s",
     .arg = "DUR",
     .help = "time between SIGTERM and SIGKILL (at most a quarter of the "
             "TTL)"},
    {.name = "owner",
     .type = TN_OPT_STR,
     AT(a.owner_id),
     .arg = "ID",
     .help = "owner_id (default HOST:PID)"},
};

static const struct tn_cli_cmd command =
    TN_CLI_CMD("run", usage, about, footer, opts);

static int parse(struct tn_cli *cli, int argc, char **argv, struct run_args *r)
{
    /* NAME (when given as an operand) and COMMAND are the operands: those
     * before the "--" that ends the options, then every argument after
     * it, COMMAND's own options included. */
    struct tn_opt_parser p;
    int ex = tn_cli_parse(cli, &command, r, argc, argv, &p);
    int next = p.first_operand;
    if (ex == 0)
        ex = tn_cli_operands(cli, "run", argc, argv, &next, &r->a.name, true);
    if (ex != 0)
        return ex;
    if (r->a.ttl_ms <= 0)
        return tn_cli_usage(cli, "run", "--ttl: is required (e.g. --ttl 10s)");
    if (next >= argc)
        return tn_cli_usage(cli, "run",
                            "a command is required after the options "
                            "(tenure run NAME --ttl 10s -- COMMAND)");
    r->cmd = argv + next;
    if (r->grace_ms > r->a.ttl_ms / 4)
        r->grace_ms = r->a.ttl_ms / 4;
    return 0;
}

static int export_env(struct tn_lease *l)
{
    char tok[32];
    (void)snprintf(tok, sizeof(tok), "%" PRIu64, tn_lease_token(l));
    int rc = setenv("TENURE_NAME", tn_lease_name(l), 1);
    rc |= setenv("TENURE_TOKEN", tok, 1);
    if (tn_lease_proof(l) != NULL)
        rc |= setenv("TENURE_PROOF", tn_lease_proof(l), 1);
    else
        rc |= unsetenv("TENURE_PROOF");
    return rc;
}

static const int fwd_signals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP};

static int install_signals(void)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    wake_fd = fds[1];
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    (void)sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(fwd_signals) / sizeof(fwd_signals[0]); i++)
        (void)sigaction(fwd_signals[i], &sa, NULL);
    (void)signal(SIGPIPE, SIG_IGN);
    return fds[0];
}

static pid_t spawn(char **cmd)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    (void)setpgid(0, 0);
    for (size_t i = 0; i < sizeof(fwd_signals) / sizeof(fwd_signals[0]); i++)
        (void)signal(fwd_signals[i], SIG_DFL);
    (void)signal(SIGPIPE, SIG_DFL);
    execvp(cmd[0], cmd);
    (void)fprintf(stderr, "tenure: cannot run \"%s\": %s\n", cmd[0],
                  strerror(errno));
    _exit(127);
}

struct child {
    pid_t pid;          /* the command; also its process group id */
    bool reaped;        /* waitpid returned it */
    int status;         /* its wait status once reaped */
    bool terminating;   /* SIGTERM sent */
    bool killed;        /* SIGKILL sent */
    int64_t kill_at_ms; /* monotonic ms of the SIGKILL */
    const char *why;    /* "lost" or "expired" once terminating */
};

static void signal_group(const struct child *ch, int sig)
{
    if (kill(-ch->pid, sig) != 0)
        (void)kill(ch->pid, sig);
}

static void reap(struct child *ch)
{
    if (ch->reaped)
        return;
    int st = 0;
    pid_t p = waitpid(ch->pid, &st, WNOHANG);
    if (p == ch->pid) {
        ch->reaped = true;
        ch->status = st;
    }
}

static void drain(int rd, struct child *ch)
{
    unsigned char buf[64];
    ssize_t n = 0;
    while ((n = read(rd, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            int sig = buf[i];
            if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
                signal_group(ch, sig);
        }
    }
    reap(ch);
}

static void terminate(struct tn_cli *cli, struct child *ch, struct tn_lease *l,
                      const char *why, int64_t grace_ms)
{
    int64_t now = tn_clock_mono_ms();
    int64_t safe = tn_lease_safe_for_ms(l);
    ch->terminating = true;
    ch->why = why;
    /* After a reported loss the grace period applies; otherwise the group
     * must be gone when the safe time ends. */
    int64_t left =
        strcmp(why, "lost") == 0 || safe > grace_ms ? grace_ms : safe;
    ch->kill_at_ms = now + left;
    tn_cli_err(cli,
               "lease \"%s\" %s: stopping the command (SIGKILL in %" PRId64
               " ms)",
               tn_lease_name(l), why, left);
    signal_group(ch, SIGTERM);
}

/* Poll timeout: until the next thing the loop must do on its own. */
static int next_timeout(const struct child *ch, struct tn_lease *l,
                        int64_t grace_ms)
{
    int64_t now = tn_clock_mono_ms();
    int64_t t = 0;
    if (!ch->terminating)
        t = tn_lease_safe_for_ms(l) - grace_ms;
    else if (!ch->killed)
        t = ch->kill_at_ms - now;
    else
        t = 1000; /* only waiting for the exit */
    if (t < 0)
        t = 0;
    return t > 60000 ? 60000 : (int)t;
}

static void step(struct tn_cli *cli, struct child *ch, struct tn_lease *l,
                 int64_t grace_ms)
{
    if (!ch->terminating) {
        int end = atomic_load(&ka_end);
        if (end == TN_LEASE_END_LOST)
            terminate(cli, ch, l, "lost", grace_ms);
        else if (end != 0 || tn_lease_safe_for_ms(l) <= grace_ms)
            terminate(cli, ch, l, "expired", grace_ms);
    }
    if (ch->terminating && !ch->killed &&
        tn_clock_mono_ms() >= ch->kill_at_ms) {
        signal_group(ch, SIGKILL);
        ch->killed = true;
    }
}

static void supervise(struct tn_cli *cli, int rd, struct child *ch,
                      struct tn_lease *l, int64_t grace_ms)
{
    for (;;) {
        reap(ch);
        if (ch->reaped)
            return;
        step(cli, ch, l, grace_ms);
        struct pollfd p = {.fd = rd, .events = POLLIN};
        int n = poll(&p, 1, next_timeout(ch, l, grace_ms));
        if (n > 0)
            drain(rd, ch);
    }
}

static int exit_status(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return TN_CLI_ERROR;
}

static int finish(struct tn_cli *cli, struct tn_client *c, struct tn_lease *l,
                  const struct child *ch)
{
    /* Nothing of the command may outlive the lease. */
    signal_group(ch, SIGKILL);
    if (ch->terminating)
        return TN_CLI_LOST; /* lost or running out: nothing to give back */
    struct tn_errmsg em = {{0}};
    int rc = tn_client_release(c, l, &em);
    if (rc < 0)
        tn_cli_err(cli, "release of \"%s\" failed: %s %s", tn_lease_name(l),
                   tn_strerror(rc), em.text);
    else if (cli->verbose)
        tn_cli_err(cli, "released \"%s\"", tn_lease_name(l));
    return exit_status(ch->status);
}

static int hold(struct tn_cli *cli, struct tn_client *c, struct tn_lease *l,
                const struct run_args *r)
{
    if (!tn_lease_is_held(l)) {
        tn_cli_err(cli, "lease \"%s\" ran out before the command started",
                   tn_lease_name(l));
        return TN_CLI_LOST;
    }
    int rd = install_signals();
    if (rd < 0 || export_env(l) != 0) {
        tn_cli_err(cli, "cannot prepare the command: %s", strerror(errno));
        return TN_CLI_ERROR;
    }
    struct child ch = {.pid = spawn(r->cmd)};
    if (ch.pid < 0) {
        tn_cli_err(cli, "fork: %s", strerror(errno));
        (void)tn_client_release(c, l, NULL);
        return TN_CLI_ERROR;
    }
    (void)setpgid(ch.pid, ch.pid); /* also here: no race with the child */
    int rc = tn_client_keepalive_start(c, l, on_lease_end, NULL);
    if (rc < 0)
        atomic_store(&ka_end, TN_LEASE_END_EXPIRED);
    supervise(cli, rd, &ch, l, r->grace_ms);
    int ex = finish(cli, c, l, &ch);
    (void)close(rd);
    return ex;
}

int tn_cmd_run(struct tn_cli *cli, int argc, char **argv)
{
    struct run_args r = {0};
    int ex = parse(cli, argc, argv, &r);
    if (ex != 0)
        return ex < 0 ? TN_CLI_OK : ex;
    if (cli->verbose) {
        cli->opts.log = on_log;
        cli->opts.log_ud = NULL;
    }
    struct tn_client *c = NULL;
    ex = tn_cli_client(cli, &c);
    if (ex != 0)
        return ex;
    struct tn_lease *l = NULL;
    struct tn_lease_info holder;
    struct tn_errmsg em = {{0}};
    int rc = tn_client_acquire(c, &r.a, &l, &holder, &em);
    if (rc == TN_ECONFLICT || rc == TN_ELOCKDELAY) {
        if (rc == TN_ELOCKDELAY)
            tn_cli_err(cli,
                       "%slease \"%s\" is in lock delay for %" PRId64 " ms",
                       r.a.wait_ms > 0 ? "the wait ended: " : "", r.a.name,
                       holder.retry_after_ms);
        else
            tn_cli_err(
                cli, "%slease \"%s\" is %sheld by \"%s\" (token %" PRIu64 ")",
                r.a.wait_ms > 0 ? "the wait ended: " : "", r.a.name,
                r.a.wait_ms > 0 ? "still " : "", holder.owner_id, holder.token);
        ex = TN_CLI_HELD;
    } else if (rc < 0) {
        ex = tn_cli_fail(cli, "acquire", rc, &em);
    } else {
        if (cli->verbose)
            tn_cli_err(cli, "acquired \"%s\" token=%" PRIu64, r.a.name,
                       tn_lease_token(l));
        ex = hold(cli, c, l, &r);
    }
    tn_lease_free(l);
    tn_client_free(c);
    return ex;
}
