#!/usr/bin/env bash
# pg-cluster.sh: throw-away PostgreSQL 15 clusters on loopback for tests.
#   pg-cluster.sh port                     print a free loopback port
#   pg-cluster.sh init DIR PORT [SYNC]     initdb + start a primary; SYNC is
#                                          a standby name made synchronous
#   pg-cluster.sh standby DIR PORT PRIMARY_PORT NAME [SYNC]
#                                          pg_basebackup from the primary and
#                                          start it as streaming standby NAME;
#                                          SYNC: its synchronous_standby_names
#                                          once it is promoted
#   pg-cluster.sh promote DIR              promote a standby (waits)
#   pg-cluster.sh wait-sync PORT NAME [S]  wait (S seconds, default 30)
#                                          until the primary on PORT has
#                                          standby NAME in sync_state sync
#   pg-cluster.sh sql PORT SQL             run SQL as postgres, print rows
#   pg-cluster.sh kill DIR                 SIGKILL the postmaster (a crash)
#   pg-cluster.sh freeze DIR               SIGSTOP the postmaster and all its
#                                          children (a paused machine)
#   pg-cluster.sh thaw DIR                 SIGCONT them
#   pg-cluster.sh stop DIR                 immediate stop, keep the files
#   pg-cluster.sh start DIR                start again after stop/kill
#   pg-cluster.sh destroy DIR              stop and remove DIR
# Runs the server as the postgres user when invoked as root.
set -euo pipefail

bindir=${TENURE_TEST_PG_BINDIR:-/usr/lib/postgresql/15/bin}
[ -x "$bindir/initdb" ] || { echo "pg-cluster: PostgreSQL 15 is not installed" >&2; exit 1; }
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# Below the kernel's range for outgoing connections (32768 and up here),
# where a client socket cannot be holding it, and not in use in any state.
free_port() {
    local p
    for _ in $(seq 1 200); do
        p=$((20000 + RANDOM % 12000))
        ss -tanH "( sport = :$p or dport = :$p )" 2>/dev/null | grep -q . ||
            { echo "$p"; return; }
    done
    return 1
}

start_server() { # DIR
    local dir=$1
    as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start \
        >"$dir/pg_ctl.out" 2>&1 || { cat "$dir/pg_ctl.out" "$dir/log" >&2; return 1; }
}

prepare_dir() { # DIR
    mkdir -p "$1"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$1"; fi
}

cmd=${1:-}
case "$cmd" in
port) free_port ;;
init)
    dir=$2 port=$3 sync=${4:-}
    prepare_dir "$dir"
    as_pg "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >/dev/null
    {
        echo "port = $port"
        echo "listen_addresses = '127.0.0.1'"
        echo "unix_socket_directories = '$dir'"
        echo "max_connections = 300"
        echo "fsync = on"
        echo "wal_level = replica"
        echo "max_wal_senders = 5"
        if [ -n "$sync" ]; then
            echo "synchronous_standby_names = '$sync'"
            echo "synchronous_commit = on"
        fi
    } >>"$dir/data/postgresql.conf"
    echo "host replication postgres 127.0.0.1/32 trust" >>"$dir/data/pg_hba.conf"
    start_server "$dir"
    ;;
standby)
    dir=$2 port=$3 primary=$4 name=$5 sync=${6:-}
    prepare_dir "$dir"
    as_pg "$bindir/pg_basebackup" -h 127.0.0.1 -p "$primary" -U postgres \
        -D "$dir/data" -R -X stream -c fast >/dev/null
    {
        echo "port = $port"
        echo "unix_socket_directories = '$dir'"
        echo "synchronous_standby_names = '$sync'"
    } >>"$dir/data/postgresql.conf"
    # -R wrote primary_conninfo into postgresql.auto.conf, which wins over
    # postgresql.conf: name the standby there
    echo "primary_conninfo = 'host=127.0.0.1 port=$primary user=postgres application_name=$name'" \
        >>"$dir/data/postgresql.auto.conf"
    start_server "$dir"
    ;;
promote) as_pg "$bindir/pg_ctl" -D "$2/data" -w -t 60 promote >/dev/null ;;
sql) "$bindir/psql" -X -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$2" -U postgres postgres -c "$3" ;;
wait-sync)
    q="SELECT sync_state FROM pg_stat_replication WHERE application_name = '$3'"
    for _ in $(seq 1 $((${4:-30} * 10))); do
        [ "$("$0" sql "$2" "$q" 2>/dev/null)" = sync ] && exit 0
        sleep 0.1
    done
    echo "pg-cluster: standby $3 of :$2 is not synchronous" >&2
    exit 1
    ;;
kill)
    # like a machine crash: the postmaster and all its children at once
    pid=$(head -1 "$2/data/postmaster.pid" 2>/dev/null || true)
    if [ -n "$pid" ]; then
        kids=$(pgrep -P "$pid" || true)
        # shellcheck disable=SC2086
        kill -9 "$pid" $kids 2>/dev/null || true
        for _ in $(seq 1 200); do
            alive=0
            for p in $pid $kids; do kill -0 "$p" 2>/dev/null && alive=1; done
            [ "$alive" = 0 ] && break
            sleep 0.05
        done
    fi
    ;;
freeze | thaw)
    sig=STOP
    [ "$cmd" = thaw ] && sig=CONT
    pid=$(head -1 "$2/data/postmaster.pid" 2>/dev/null || true)
    [ -n "$pid" ] || { echo "pg-cluster: no postmaster in $2" >&2; exit 1; }
    # the postmaster first: stopped, it forks no new child meanwhile
    kill -"$sig" "$pid"
    # shellcheck disable=SC2046
    kill -"$sig" $(pgrep -P "$pid") 2>/dev/null || true
    ;;
stop)
    "$0" thaw "$2" 2>/dev/null || true # a frozen postmaster hears no signal
    as_pg "$bindir/pg_ctl" -D "$2/data" -m immediate stop >/dev/null 2>&1 || true
    ;;
start) start_server "$2" ;;
destroy)
    "$0" thaw "$2" 2>/dev/null || true
    as_pg "$bindir/pg_ctl" -D "$2/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$2"
    ;;
*)
    sed -n '2,22p' "$0" >&2
    exit 2
    ;;
esac
