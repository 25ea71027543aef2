#!/usr/bin/env bash
# Helpers for the PostgreSQL store tests (source after lib.sh).
#   pg_need           skip (77) only when TENURE_TEST_PG_URL is unset
#   pg_psql URL SQL   run SQL, quiet, stop on error
#   pg_fresh_schema NAME  create schema NAME (dropped first); sets PG_URL to
#                     the test database with search_path=NAME, so each test
#                     has its own tables and sequence
#   pg_start_instance N URL [args]  start tenured instance N on URL and
#                     wait until it is ready; sets PORTS[N], URLS[N], PIDS[N]
#   pg_spawn_instance N URL [args]  the same without waiting (an instance
#                     that is meant to refuse)
#   pg_need_server    skip (77) when PostgreSQL 15 is not installed (for
#                     the tests that run private clusters, pg_private_dir)
#   pg_private_primary  a private primary a on PG_PA, PG_PB free for b
#   pg_kill_instance N / pg_stop_instance N [SIG] / pg_restart_instance N

pg_need() {
    if [ -z "${TENURE_TEST_PG_URL:-}" ]; then
        echo "skip: TENURE_TEST_PG_URL is not set (run under scripts/with-pg.sh)"
        exit 77
    fi
    PG_BINDIR=${TENURE_TEST_PG_BINDIR:-/usr/lib/postgresql/15/bin}
}

pg_psql() {
    "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 "$1" -c "$2" >/dev/null
}

# pg_client_ports PID: the local ports of PID's TCP connections, comma-
# separated (pg_stat_activity.client_port of its backends, over TCP).
pg_client_ports() {
    ss -Htnp 2>/dev/null |
        awk -v p="pid=$1," 'index($0, p) { n = split($4, a, ":"); printf "%s%s", sep, a[n]; sep = "," }'
}

pg_url_with_schema() { # URL SCHEMA
    local sep='?'
    case "$1" in *\?*) sep='&' ;; esac
    printf '%s%soptions=-csearch_path%%3D%s' "$1" "$sep" "$2"
}

pg_fresh_schema() {
    pg_psql "$TENURE_TEST_PG_URL" "DROP SCHEMA IF EXISTS $1 CASCADE; CREATE SCHEMA $1" \
        2>/dev/null || fail "cannot create schema $1 at $TENURE_TEST_PG_URL"
    PG_URL=$(pg_url_with_schema "$TENURE_TEST_PG_URL" "$1")
}

# Instance N is the launcher's (lib-tenured.sh) instance "N", with its
# data in $T/dataN and its log in $T/tenuredN.log; PORTS, URLS and PIDS
# mirror it for the tests.
declare -ga PORTS=() URLS=() PIDS=()

pg_vars() { # N
    PORTS[$1]=${TN_SRV_PORT[$1]} URLS[$1]=${TN_SRV_URL[$1]} PIDS[$1]=${TN_SRV_PID[$1]}
}

pg_spawn_instance() { # N URL [extra args]
    local n=$1 url=$2
    shift 2
    tn_server_start -n -i "$n" -d "$T/data$n" -l "$T/tenured$n.log" -- \
        --store "$url" "$@"
    pg_vars "$n"
}

pg_start_instance() { # N URL [extra args]
    local n=$1 url=$2
    shift 2
    tn_server_start -i "$n" -d "$T/data$n" -l "$T/tenured$n.log" -- \
        --store "$url" "$@" || fail "instance $n did not become ready: $TN_SERVER_ERR"
    pg_vars "$n"
}

pg_need_server() {
    PG_BINDIR=${TENURE_TEST_PG_BINDIR:-/usr/lib/postgresql/15/bin}
    [ -x "$PG_BINDIR/initdb" ] || { echo "skip: PostgreSQL 15 is not installed"; exit 77; }
}

pg_kill_instance() { tn_server_kill "$1"; }

# pg_stop_instance N [SIGNAL]: SIGNAL (TERM), wait; status in TN_SERVER_RC.
pg_stop_instance() { tn_server_stop "$1" "${2:-TERM}"; }

# pg_restart_instance N: start instance N again (same port, data dir and
# arguments) without waiting for it.
pg_restart_instance() {
    tn_server_restart -n "$1"
    pg_vars "$1"
}

# pg_private_dir: a directory for private clusters (outside $T, which the
# postgres user cannot enter); removed with every cluster in it on exit.
pg_private_dir() {
    PGPRIV=$(mktemp -d /tmp/tenure-pgpriv.XXXXXX)
    chmod 755 "$PGPRIV"
    trap 'set +e; pg_private_cleanup; tn_cleanup' EXIT
}

# pg_private_primary: how the tests of a primary a and a standby b begin:
# skip (77) without PostgreSQL 15 or the test tools, then $PGPRIV, two
# distinct free ports PG_PA and PG_PB, and node a started on PG_PA
# ($PGPRIV/a, its log in $T/pg.log).  The standby is the test's to start.
pg_private_primary() {
    pg_need_server
    need_tools
    pg_private_dir
    PG_PA=$(pg_cluster port)
    PG_PB=$(pg_cluster port)
    while [ "$PG_PB" = "$PG_PA" ]; do PG_PB=$(pg_cluster port); done
    pg_cluster init "$PGPRIV/a" "$PG_PA" >"$T/pg.log" 2>&1 || fail "cannot start PostgreSQL"
}

pg_private_cleanup() {
    local d
    for d in "$PGPRIV"/*/; do
        [ -d "$d" ] && "$TN_SRC/scripts/pg-cluster.sh" destroy "${d%/}" || true
    done
    rm -rf "$PGPRIV"
}

pg_cluster() { "$TN_SRC/scripts/pg-cluster.sh" "$@"; }

# reqh METHOD PATH [BODY]: like req, also sets HDRS (response headers).
reqh() {
    local method=$1 path=$2 data=${3:-} out
    if [ -n "$data" ]; then
        out=$(curl -s --max-time 10 -X "$method" -H 'Content-Type: application/json' \
            --data-binary "$data" -D "$T/hdrs" -w '\n%{http_code}' "$URL$path") || true
    else
        out=$(curl -s --max-time 10 -X "$method" -D "$T/hdrs" -w '\n%{http_code}' "$URL$path") || true
    fi
    CODE=${out##*$'\n'}
    BODY=${out%$'\n'*}
    [ "$BODY" != "$CODE" ] || BODY=""
    HDRS=$(tr -d '\r' <"$T/hdrs" 2>/dev/null || true)
}

# wait_code PATH CODE SECONDS: poll GET PATH until it answers CODE.
wait_code() {
    local i
    for i in $(seq 1 $(($3 * 20))); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL$1")" = "$2" ] && return 0
        sleep 0.05
    done
    return 1
}

# pg_metric URL NAME: metric NAME of the tenured at URL.
pg_metric() { curl -s --max-time 2 "$1/metrics" | awk -v m="$2" '$1 == m {print $2}'; }
# pg_readyz URL: the status /readyz answers (000 when nothing does).
pg_readyz() { curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$1/readyz" || true; }
# pg_wait_for SECONDS CMD...: run CMD every 0.1 s until it succeeds.
pg_wait_for() {
    local i
    for i in $(seq 1 $(($1 * 10))); do
        "${@:2}" && return 0
        sleep 0.1
    done
    return 1
}
# pg_is URL CODE / pg_metric_is URL NAME VALUE: for pg_wait_for.
pg_is() { [ "$(pg_readyz "$1")" = "$2" ]; }
pg_metric_is() { [ "$(pg_metric "$1" "$2")" = "$3" ]; }
