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
#   pg_kill_instance N / pg_restart_instance N

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

declare -a PORTS=() URLS=() PIDS=() IARGS=()

pg_launch() { # N: start instance N with the arguments it was created with
    local n=$1
    mkdir -p "$T/data$n"
    # shellcheck disable=SC2086
    "$TN_BIN/tenured" --listen "127.0.0.1:${PORTS[$n]}" --data-dir "$T/data$n" \
        ${IARGS[$n]} >>"$T/tenured$n.log" 2>&1 &
    PIDS[$n]=$!
    TN_PIDS+=("${PIDS[$n]}")
}

pg_spawn_instance() { # N URL [extra args]
    local n=$1 url=$2
    shift 2
    PORTS[$n]=$(tn_free_port)
    URLS[$n]="http://127.0.0.1:${PORTS[$n]}"
    IARGS[$n]="--store $url $*"
    pg_launch "$n"
}

pg_start_instance() { # N URL [extra args]
    pg_spawn_instance "$@"
    tn_wait_ready "${URLS[$1]}" || fail "instance $1 did not become ready"
}

pg_need_server() {
    PG_BINDIR=${TENURE_TEST_PG_BINDIR:-/usr/lib/postgresql/15/bin}
    [ -x "$PG_BINDIR/initdb" ] || { echo "skip: PostgreSQL 15 is not installed"; exit 77; }
}

# Dead pids leave TN_PIDS: lib.sh's cleanup must only see live ones.
pg_forget_pid() {
    local keep=() p
    for p in "${TN_PIDS[@]}"; do
        if [ "$p" != "$1" ]; then keep+=("$p"); fi
    done
    TN_PIDS=("${keep[@]}")
    return 0
}

pg_kill_instance() {
    kill -9 "${PIDS[$1]}" 2>/dev/null || true
    wait "${PIDS[$1]}" 2>/dev/null || true
    pg_forget_pid "${PIDS[$1]}"
}

pg_restart_instance() { pg_launch "$1"; }

# pg_private_dir: a directory for private clusters (outside $T, which the
# postgres user cannot enter); removed with every cluster in it on exit.
pg_private_dir() {
    PGPRIV=$(mktemp -d /tmp/tenure-pgpriv.XXXXXX)
    chmod 755 "$PGPRIV"
    trap 'set +e; pg_private_cleanup; tn_cleanup' EXIT
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
